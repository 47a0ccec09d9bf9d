"""Session behaviour a pooled gateway must keep per client, seen by PyMySQL.

usage: session_leftovers.py ignore_space HOST PORT USER PASSWORD
         three clients in turn, each logging in with CLIENT_IGNORE_SPACE, run
         `SELECT @@sql_mode` and `SELECT COUNT (*) FROM test.t0` (a space after the function name,
         valid only with IGNORE_SPACE); prints sql_mode_N and count_N (or count_N=error:CODE).
       session_leftovers.py gone_away HOST PORT USER PASSWORD IDLE_SECS [interactive] [set=N]
         one client (CLIENT_INTERACTIVE with `interactive`; `SET wait_timeout=N` first with
         `set=N`) idles IDLE_SECS, then runs `SELECT 1+1`; prints result=ok or result=error:CODE.
"""
import sys
import time

import pymysql
from pymysql.constants import CLIENT

mode, host, port, user, password = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]


def connect(flags):
    return pymysql.connect(host=host, port=port, user=user, password=password, client_flag=flags)


if mode == "ignore_space":
    for n in range(3):
        c = connect(CLIENT.IGNORE_SPACE)
        with c.cursor() as cur:
            cur.execute("SELECT @@sql_mode")
            print(f"sql_mode_{n}={cur.fetchone()[0]}")
            try:
                cur.execute("SELECT COUNT (*) FROM test.t0")
                print(f"count_{n}={cur.fetchone()[0]}")
            except pymysql.MySQLError as e:
                print(f"count_{n}=error:{e.args[0]}")
        c.close()
elif mode == "gone_away":
    idle = float(sys.argv[6])
    extra = sys.argv[7:]
    c = connect(CLIENT.INTERACTIVE if "interactive" in extra else 0)
    with c.cursor() as cur:
        for e in extra:
            if e.startswith("set="):
                cur.execute(f"SET wait_timeout={int(e[4:])}")
        time.sleep(idle)
        try:
            cur.execute("SELECT 1+1")
            print("result=ok")
        except pymysql.MySQLError as e:
            print(f"result=error:{e.args[0]}")
else:
    sys.exit(f"unknown mode {mode}")
