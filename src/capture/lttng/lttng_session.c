/* lttng_session.c - start and stop the LTTng session behind
 * `trainscope record --lttng`, by running the `lttng` command.
 *
 * Not for: firing tracepoints (lttng.c) or reading the trace (ingest/ctf.c).
 * liblttng-ctl has no development headers on these machines, and the
 * command is the documented interface anyway; each step's output is kept in
 * a temporary file so a failure can say what lttng said.
 */
#include "capture/lttng/lttng.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core.h"
#include "trainscope/record.h"

extern char **environ;

/* Run `lttng ARGS...`; 0 when it exited 0. On failure the first line of
 * what it printed goes into err. */
static int run_lttng(char *const argv[], ts_error *err)
{
    char log_path[] = "/tmp/trainscope-lttng-XXXXXX";
    int log_fd = mkstemp(log_path);
    if (log_fd < 0)
        return ts__error(err, TS_EIO, "lttng: cannot create a temporary file");
    unlink(log_path);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, log_fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, log_fd, STDERR_FILENO);
    pid_t pid;
    int rc = posix_spawnp(&pid, "lttng", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        close(log_fd);
        return ts__error(err, TS_ENOENT, "lttng: cannot run the lttng command (lttng-tools not installed?)");
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            close(log_fd);
            return ts__error(err, TS_EIO, "lttng %s: cannot wait for it: %s", argv[1], strerror(errno));
        }
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        close(log_fd);
        return TS_OK;
    }
    char said[400] = "";
    ssize_t n = pread(log_fd, said, sizeof said - 1, 0);
    close(log_fd);
    said[n > 0 ? n : 0] = '\0';
    said[strcspn(said, "\n")] = '\0';
    return ts__error(err, TS_EIO, "lttng %s %s: %s", argv[1], argv[2] ? argv[2] : "",
                     said[0] ? said : "failed");
}

int ts__lttng_session_start(const char *dir, const char *name, ts_error *err)
{
    char out[4096], session[300];
    snprintf(out, sizeof out, "--output=%s/lttng", dir);
    snprintf(session, sizeof session, "--session=%s", name);
    char *create[] = {"lttng", "create", (char *)name, out, NULL};
    char *enable[] = {"lttng", "enable-event", "--userspace", "trainscope:*", session, NULL};
    char *context[] = {"lttng", "add-context", "--userspace", "--type=vpid", "--type=vtid",
                       "--type=procname", session, NULL};
    char *start[] = {"lttng", "start", (char *)name, NULL};
    char *destroy[] = {"lttng", "destroy", (char *)name, NULL};
    int rc = run_lttng(create, err);
    if (rc != TS_OK)
        return rc;
    if ((rc = run_lttng(enable, err)) != TS_OK || (rc = run_lttng(context, err)) != TS_OK ||
        (rc = run_lttng(start, err)) != TS_OK) {
        (void)run_lttng(destroy, NULL);
        return rc;
    }
    return TS_OK;
}

int ts__lttng_session_stop(const char *name, ts_error *err)
{
    char *stop[] = {"lttng", "stop", (char *)name, NULL};
    char *destroy[] = {"lttng", "destroy", (char *)name, NULL};
    int rc = run_lttng(stop, err);
    int rc2 = run_lttng(destroy, rc == TS_OK ? err : NULL);
    return rc != TS_OK ? rc : rc2;
}

/* The public names (include/trainscope/record.h). */
int ts_record_lttng_start(const char *dir, const char *name, ts_error *err)
{
    return ts__lttng_session_start(dir, name, err);
}

int ts_record_lttng_stop(const char *name, ts_error *err)
{
    return ts__lttng_session_stop(name, err);
}
