# module.mk - ingest: Nsight Systems SQLite exports are read through libsqlite3
# and CTF traces through libbabeltrace2 (Debian libsqlite3-dev,
# libbabeltrace2-dev, in scripts/install-deps.sh), both opened on first use
# (core/dynlib.h): nothing links them but the tests that build databases
# themselves, and -ldl for dlopen (in libc since glibc 2.34).
MODULE_LDLIBS += -ldl
$(BUILD)/test/test_sqlite $(BUILD)/test/test_nsys: TEST_LDLIBS += -lsqlite3
