# module.mk - ingest: Nsight Systems SQLite exports are read through libsqlite3
# (Debian libsqlite3-dev, in scripts/install-deps.sh).
MODULE_LDLIBS += -lsqlite3
