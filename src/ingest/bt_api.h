/* bt_api.h - libbabeltrace2 opened on first use (core/dynlib.h), for
 * ctf.c: include this instead of <babeltrace2/babeltrace.h>; the bt_* calls
 * below then go through ts__bt_api, which ts__bt_open fills (ctf.c calls it
 * when a CTF trace is loaded). libbabeltrace2 brings glib, gmodule and pcre2
 * with it: a process that reads no CTF trace loads none of them.
 *
 * Not for: other users of babeltrace (capture writes CTF through LTTng, not
 * this). A function ctf.c calls must be in TS_BT_FNS (one that is not links
 * against nothing and fails the build); babeltrace's static inline helpers
 * (bt_field_class_type_is) are compiled in and need no entry.
 */
#ifndef TS_INGEST_BT_API_H
#define TS_INGEST_BT_API_H

#include <babeltrace2/babeltrace.h>

#include "core/dynlib.h"

#define TS_BT_FNS(X) \
    X(bt_clock_class_get_frequency) X(bt_clock_snapshot_borrow_clock_class_const) \
    X(bt_clock_snapshot_get_value) X(bt_component_filter_borrow_input_port_by_index_const) \
    X(bt_component_filter_borrow_output_port_by_index_const) \
    X(bt_component_sink_borrow_input_port_by_index_const) \
    X(bt_component_source_borrow_output_port_by_index_const) X(bt_component_source_get_output_port_count) \
    X(bt_current_thread_clear_error) X(bt_current_thread_move_error) X(bt_current_thread_take_error) \
    X(bt_error_borrow_cause_by_index) X(bt_error_cause_get_message) X(bt_error_get_cause_count) \
    X(bt_error_release) X(bt_event_borrow_class_const) X(bt_event_borrow_common_context_field_const) \
    X(bt_event_borrow_payload_field_const) X(bt_event_class_get_name) X(bt_field_borrow_class_const) \
    X(bt_field_class_structure_borrow_member_by_index_const) X(bt_field_class_structure_get_member_count) \
    X(bt_field_class_structure_member_get_name) X(bt_field_get_class_type) \
    X(bt_field_integer_signed_get_value) X(bt_field_integer_unsigned_get_value) \
    X(bt_field_real_double_precision_get_value) X(bt_field_real_single_precision_get_value) \
    X(bt_field_string_get_value) X(bt_field_structure_borrow_member_field_by_index_const) \
    X(bt_field_structure_borrow_member_field_by_name_const) X(bt_graph_add_filter_component) \
    X(bt_graph_add_simple_sink_component) X(bt_graph_add_source_component) X(bt_graph_connect_ports) \
    X(bt_graph_create) X(bt_graph_put_ref) X(bt_graph_run) X(bt_message_discarded_events_get_count) \
    X(bt_message_discarded_packets_get_count) X(bt_message_event_borrow_default_clock_snapshot_const) \
    X(bt_message_event_borrow_event_const) X(bt_message_event_borrow_stream_class_default_clock_class_const) \
    X(bt_message_get_type) X(bt_message_iterator_next) X(bt_message_put_ref) \
    X(bt_plugin_borrow_filter_component_class_by_name_const) \
    X(bt_plugin_borrow_source_component_class_by_name_const) X(bt_plugin_find) X(bt_plugin_put_ref) \
    X(bt_plugin_find_all_from_file) X(bt_plugin_get_name) X(bt_plugin_get_ref) X(bt_plugin_set_get_plugin_count) \
    X(bt_plugin_set_borrow_plugin_by_index_const) X(bt_plugin_set_put_ref) \
    X(bt_value_array_append_string_element) X(bt_value_array_get_length) X(bt_value_map_create) \
    X(bt_value_map_insert_empty_array_entry) X(bt_value_put_ref)

/* ts__bt_open(who, err): libbabeltrace2.so.0, as ts__dynlib_open */
TS_DYNLIB_DECLARE(ts_bt_api, ts__bt_api, TS_BT_FNS, ts__bt_open)

#ifndef TS_BT_API_IMPL
#define bt_clock_class_get_frequency (ts__bt_api.bt_clock_class_get_frequency)
#define bt_clock_snapshot_borrow_clock_class_const (ts__bt_api.bt_clock_snapshot_borrow_clock_class_const)
#define bt_clock_snapshot_get_value (ts__bt_api.bt_clock_snapshot_get_value)
#define bt_component_filter_borrow_input_port_by_index_const (ts__bt_api.bt_component_filter_borrow_input_port_by_index_const)
#define bt_component_filter_borrow_output_port_by_index_const (ts__bt_api.bt_component_filter_borrow_output_port_by_index_const)
#define bt_component_sink_borrow_input_port_by_index_const (ts__bt_api.bt_component_sink_borrow_input_port_by_index_const)
#define bt_component_source_borrow_output_port_by_index_const (ts__bt_api.bt_component_source_borrow_output_port_by_index_const)
#define bt_component_source_get_output_port_count (ts__bt_api.bt_component_source_get_output_port_count)
#define bt_current_thread_clear_error (ts__bt_api.bt_current_thread_clear_error)
#define bt_current_thread_move_error (ts__bt_api.bt_current_thread_move_error)
#define bt_current_thread_take_error (ts__bt_api.bt_current_thread_take_error)
#define bt_error_borrow_cause_by_index (ts__bt_api.bt_error_borrow_cause_by_index)
#define bt_error_cause_get_message (ts__bt_api.bt_error_cause_get_message)
#define bt_error_get_cause_count (ts__bt_api.bt_error_get_cause_count)
#define bt_error_release (ts__bt_api.bt_error_release)
#define bt_event_borrow_class_const (ts__bt_api.bt_event_borrow_class_const)
#define bt_event_borrow_common_context_field_const (ts__bt_api.bt_event_borrow_common_context_field_const)
#define bt_event_borrow_payload_field_const (ts__bt_api.bt_event_borrow_payload_field_const)
#define bt_event_class_get_name (ts__bt_api.bt_event_class_get_name)
#define bt_field_borrow_class_const (ts__bt_api.bt_field_borrow_class_const)
#define bt_field_class_structure_borrow_member_by_index_const (ts__bt_api.bt_field_class_structure_borrow_member_by_index_const)
#define bt_field_class_structure_get_member_count (ts__bt_api.bt_field_class_structure_get_member_count)
#define bt_field_class_structure_member_get_name (ts__bt_api.bt_field_class_structure_member_get_name)
#define bt_field_get_class_type (ts__bt_api.bt_field_get_class_type)
#define bt_field_integer_signed_get_value (ts__bt_api.bt_field_integer_signed_get_value)
#define bt_field_integer_unsigned_get_value (ts__bt_api.bt_field_integer_unsigned_get_value)
#define bt_field_real_double_precision_get_value (ts__bt_api.bt_field_real_double_precision_get_value)
#define bt_field_real_single_precision_get_value (ts__bt_api.bt_field_real_single_precision_get_value)
#define bt_field_string_get_value (ts__bt_api.bt_field_string_get_value)
#define bt_field_structure_borrow_member_field_by_index_const (ts__bt_api.bt_field_structure_borrow_member_field_by_index_const)
#define bt_field_structure_borrow_member_field_by_name_const (ts__bt_api.bt_field_structure_borrow_member_field_by_name_const)
#define bt_graph_add_filter_component (ts__bt_api.bt_graph_add_filter_component)
#define bt_graph_add_simple_sink_component (ts__bt_api.bt_graph_add_simple_sink_component)
#define bt_graph_add_source_component (ts__bt_api.bt_graph_add_source_component)
#define bt_graph_connect_ports (ts__bt_api.bt_graph_connect_ports)
#define bt_graph_create (ts__bt_api.bt_graph_create)
#define bt_graph_put_ref (ts__bt_api.bt_graph_put_ref)
#define bt_graph_run (ts__bt_api.bt_graph_run)
#define bt_message_discarded_events_get_count (ts__bt_api.bt_message_discarded_events_get_count)
#define bt_message_discarded_packets_get_count (ts__bt_api.bt_message_discarded_packets_get_count)
#define bt_message_event_borrow_default_clock_snapshot_const (ts__bt_api.bt_message_event_borrow_default_clock_snapshot_const)
#define bt_message_event_borrow_event_const (ts__bt_api.bt_message_event_borrow_event_const)
#define bt_message_event_borrow_stream_class_default_clock_class_const (ts__bt_api.bt_message_event_borrow_stream_class_default_clock_class_const)
#define bt_message_get_type (ts__bt_api.bt_message_get_type)
#define bt_message_iterator_next (ts__bt_api.bt_message_iterator_next)
#define bt_message_put_ref (ts__bt_api.bt_message_put_ref)
#define bt_plugin_borrow_filter_component_class_by_name_const (ts__bt_api.bt_plugin_borrow_filter_component_class_by_name_const)
#define bt_plugin_borrow_source_component_class_by_name_const (ts__bt_api.bt_plugin_borrow_source_component_class_by_name_const)
#define bt_plugin_find (ts__bt_api.bt_plugin_find)
#define bt_plugin_find_all_from_file (ts__bt_api.bt_plugin_find_all_from_file)
#define bt_plugin_get_name (ts__bt_api.bt_plugin_get_name)
#define bt_plugin_get_ref (ts__bt_api.bt_plugin_get_ref)
#define bt_plugin_set_get_plugin_count (ts__bt_api.bt_plugin_set_get_plugin_count)
#define bt_plugin_set_borrow_plugin_by_index_const (ts__bt_api.bt_plugin_set_borrow_plugin_by_index_const)
#define bt_plugin_set_put_ref (ts__bt_api.bt_plugin_set_put_ref)
#define bt_plugin_put_ref (ts__bt_api.bt_plugin_put_ref)
#define bt_value_array_append_string_element (ts__bt_api.bt_value_array_append_string_element)
#define bt_value_array_get_length (ts__bt_api.bt_value_array_get_length)
#define bt_value_map_create (ts__bt_api.bt_value_map_create)
#define bt_value_map_insert_empty_array_entry (ts__bt_api.bt_value_map_insert_empty_array_entry)
#define bt_value_put_ref (ts__bt_api.bt_value_put_ref)
#endif

#endif
