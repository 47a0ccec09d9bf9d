"""PyMySQL's kill-by-CONNECTION_ID() pattern: connection A reads its id, connection B kills it,
A is gone and its id is no longer in B's SHOW PROCESSLIST.

usage: kill_by_connection_id.py HOST PORT USER PASSWORD
prints key=value lines: greeting_id, connection_id, killed (A's next query failed: 1/0),
listed_after (A's id still in the process list once the kill returned: 1/0), process_killed
(a third connection killed with COM_PROCESS_KILL: 1/0), error on failure.
"""
import sys
import time

import pymysql

host, port, user, password = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]


def connect():
    return pymysql.connect(host=host, port=port, user=user, password=password, autocommit=True)


try:
    a = connect()
    b = connect()
    with a.cursor() as cur:
        cur.execute("select connection_id()")
        kill_id = cur.fetchone()[0]
    print(f"greeting_id={a.thread_id()}")
    print(f"connection_id={kill_id}")
    with b.cursor() as cur:
        cur.execute("show processlist")
        ids = [row[0] for row in cur.fetchall()]
        print(f"listed_before={int(kill_id in ids)}")
        cur.execute(f"kill {kill_id}")
    try:
        with a.cursor() as cur:
            cur.execute("select 1")
        killed = 0
    except pymysql.err.OperationalError:
        killed = 1
    print(f"killed={killed}")
    # The kill has returned: A must be off the list (polled briefly: a server-side kill ends
    # the thread asynchronously).
    deadline = time.monotonic() + 5
    while True:
        with b.cursor() as cur:
            cur.execute("show processlist")
            listed = kill_id in [row[0] for row in cur.fetchall()]
        if not listed or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    print(f"listed_after={int(listed)}")
except Exception as e:  # reported, the test decides
    print(f"error={type(e).__name__}: {e}")

# COM_PROCESS_KILL (PyMySQL's Connection.kill) with the id CONNECTION_ID() gave.
try:
    c = connect()
    with c.cursor() as cur:
        cur.execute("select connection_id()")
        c_id = cur.fetchone()[0]
    b.kill(c_id)
    try:
        with c.cursor() as cur:
            cur.execute("select 1")
        print("process_killed=0")
    except pymysql.err.OperationalError:
        print("process_killed=1")
except Exception as e:
    print(f"error={type(e).__name__}: {e}")
