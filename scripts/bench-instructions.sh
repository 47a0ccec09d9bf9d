#!/usr/bin/env bash
# Instructions per statement of the gateway, counted by valgrind's callgrind: unlike QPS or CPU
# time, the count does not move when other work shares the machine, so two builds can be compared
# on a busy 2-CPU box. One private MariaDB, sysbench (one thread, a fixed number of events after a
# warm-up) through the gateway 1:1 and routed (a static topology declaring sbtest1..4 HASH(id) with
# 4 partitions, all led by that one server: the cost of routing, as `cargo xtask bench`'s `routed`).
# Userspace instructions only (the kernel's share is not counted).
#
#   scripts/bench-instructions.sh [--bin PATH] [--events N] [--test oltp_point_select]
#                                 [--ps-mode disable|auto] [--modes 1:1,routed] [--top K]
#
# Prints per mode: instructions per statement, atomic read-modify-writes executed per statement
# (scripts/atomics-per-stmt.py: callgrind counts each as one instruction, each costs about twenty
# cycles), and the K gateway functions with the largest inclusive cost per statement. Profiles
# stay in target/bench-instructions/ (callgrind_annotate).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release/gateway; EVENTS=3000; TEST=oltp_point_select; PS=disable; MODES="1:1,routed"; TOP=12
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) BIN=$2; shift 2 ;;
        --events) EVENTS=$2; shift 2 ;;
        --test) TEST=$2; shift 2 ;;
        --ps-mode) PS=$2; shift 2 ;;
        --modes) MODES=$2; shift 2 ;;
        --top) TOP=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
command -v valgrind >/dev/null || { echo "installing valgrind"; apt-get install -y -qq valgrind >/dev/null; }
if [ "$BIN" = target/release/gateway ]; then
    PATH="$HOME/.cargo/bin:$PATH" cargo build --release -p gateway -q
fi
BIN=$(realpath "$BIN")
DIR=$PWD/target/bench-instructions
rm -rf "$DIR"; mkdir -p "$DIR"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
DB_PORT=$(free_port)
DB_PID=""; GW_PID=""
cleanup() {
    [ -n "$GW_PID" ] && kill "$GW_PID" 2>/dev/null || true
    [ -n "$DB_PID" ] && kill "$DB_PID" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT
wait_sql() { for _ in $(seq 1200); do mariadb -h127.0.0.1 -P"$1" -uroot -e 'select 1' >/dev/null 2>&1 && return 0; sleep 0.1; done; return 1; }

mariadb-install-db --no-defaults --datadir="$DIR/db" --auth-root-authentication-method=normal --skip-test-db >"$DIR/install.log" 2>&1
mariadbd --no-defaults --datadir="$DIR/db" --port="$DB_PORT" --bind-address=127.0.0.1 --socket="$DIR/db.sock" \
    --user=root --innodb-buffer-pool-size=256M >"$DIR/mariadb.log" 2>&1 &
DB_PID=$!
wait_sql "$DB_PORT" || { echo "MariaDB did not start: $DIR/mariadb.log" >&2; exit 1; }
mariadb -h127.0.0.1 -P"$DB_PORT" -uroot -e 'CREATE DATABASE sbtest'
SB_TABLES="--tables=4 --table-size=1000"
sysbench "$TEST" --mysql-host=127.0.0.1 --mysql-port="$DB_PORT" --mysql-user=root $SB_TABLES prepare >/dev/null

{
    echo 'cluster = "bench"'
    echo '[[zones]]'; echo 'name = "zone1"'; echo 'region = "r1"'; echo 'idc = "idc1"'; echo 'type = "ReadWrite"'
    echo '[[servers]]'; echo 'name = "s1"'; echo "addr = \"127.0.0.1:$DB_PORT\""; echo 'zone = "zone1"'
    echo '[[tenants]]'; echo 'name = "sys"'; echo 'id = 1'; echo 'primary_zone = "zone1"'
    for t in 1 2 3 4; do
        echo '[[tables]]'; echo 'tenant = "sys"'; echo 'database = "sbtest"'; echo "name = \"sbtest$t\""
        echo "ddl = \"CREATE TABLE sbtest$t (id INT NOT NULL, k INT NOT NULL, c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL, PRIMARY KEY (id)) PARTITION BY HASH(id) PARTITIONS 4\""
        echo 'partitions = [{ name = "p0", leader = "s1" }, { name = "p1", leader = "s1" }, { name = "p2", leader = "s1" }, { name = "p3", leader = "s1" }]'
    done
} >"$DIR/topology.toml"

config() { # mode port
    # epoll session threads: valgrind (3.19) does not run the io_uring ones, and the gateway under
    # it never answers. The code this counts (reading, analysis, planning, the relay) is the same.
    printf '[listen]\naddress = "127.0.0.1:%s"\nsession_io = "epoll"\n\n[backend]\naddress = "127.0.0.1:%s"\n\n' "$2" "$DB_PORT"
    printf '[[users]]\nname = "root"\npassword = ""\nauth_plugin = "mysql_native_password"\n\n[log]\nlevel = "warn"\n'
    if [ "$1" = routed ]; then printf '\n[routing]\ntopology = "%s"\nidc = "idc1"\n' "$DIR/topology.toml"; fi
}

printf '\n%-8s %-18s %-8s %8s %14s %14s\n' mode test ps events "instr/stmt" "atomics/stmt"
declare -A RESULT
for mode in ${MODES//,/ }; do
    tag=${mode//:/-}
    port=$(free_port)
    config "$mode" "$port" >"$DIR/$tag.toml"
    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$DIR/callgrind-$tag.out" "$BIN" run --config "$DIR/$tag.toml" \
        >"$DIR/gateway-$tag.log" 2>&1 &
    GW_PID=$!
    wait_sql "$port" || { echo "gateway ($mode) did not start: $DIR/gateway-$tag.log" >&2; exit 1; }
    sb="sysbench $TEST --mysql-host=127.0.0.1 --mysql-port=$port --mysql-user=root $SB_TABLES --threads=1 --db-ps-mode=$PS --time=0"
    $sb --events=300 run >/dev/null
    callgrind_control -z "$GW_PID" >/dev/null
    stmts=$($sb --events="$EVENTS" run | awk '/queries:/ {print $2; exit}')
    callgrind_control -d "$GW_PID" >/dev/null
    kill "$GW_PID"; wait "$GW_PID" 2>/dev/null || true; GW_PID=""
    # The dump after zeroing is the largest part file.
    part=$(ls -S "$DIR"/callgrind-"$tag".out* | head -1)
    total=$(callgrind_annotate "$part" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}')
    RESULT[$mode]="$part $stmts"
    atomics=$(python3 scripts/atomics-per-stmt.py "$part" "$BIN" "$stmts")
    printf '%-8s %-18s %-8s %8s %14s %14s\n' "$mode" "$TEST" "$PS" "$stmts" "$((total / stmts))" "$atomics"
done
for mode in ${MODES//,/ }; do
    read -r part stmts <<<"${RESULT[$mode]}"
    echo; echo "$mode: largest inclusive costs per statement (gateway functions)"
    callgrind_annotate --inclusive=yes --threshold=100 "$part" 2>/dev/null \
        | awk -v n="$stmts" -v top="$TOP" '/gateway::/ && $1 ~ /^[0-9,]+$/ {
            c = $1; gsub(",", "", c); name = $0; sub(/^[^?]*\?\?\?:/, "", name); sub(/ \[.*$/, "", name)
            if (name ~ /^gateway::main|::serve::|proxy::run/) next
            printf "  %8d  %s\n", c / n, name; if (++k >= top) exit }' || true  # awk stops reading early
done
