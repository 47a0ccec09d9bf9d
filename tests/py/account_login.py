"""Log in once with PyMySQL and report what happened, for comparing a server with the gateway.

usage: account_login.py HOST PORT USER PASSWORD [--bind ADDR] [--charset-id N] [--db NAME] [--no-nacl 1]
prints key=value lines: result=ok, user=CURRENT_USER(), db=DATABASE() after `SELECT`; or
result=error, error_code, error_msg (the login's or the first statement's error), stage=login|query.
--charset-id sends that collation id in the handshake (PyMySQL itself knows no ucs2/utf16/utf32).
--no-nacl hides PyNaCl, so that a client_ed25519 request fails (error_code=-1).
"""
import sys

import pymysql
import pymysql.connections as connections
from pymysql.charset import Charset

args = sys.argv[1:]
host, port, user, password = args[0], int(args[1]), args[2], args[3]
opts = dict(zip(args[4::2], args[5::2]))
kw = {}
if "--bind" in opts:
    kw["bind_address"] = opts["--bind"]
if "--db" in opts:
    kw["database"] = opts["--db"]
if "--no-nacl" in opts:
    sys.modules["nacl"] = None
if "--charset-id" in opts:
    cid = int(opts["--charset-id"])
    connections.charset_by_name = lambda name: Charset(cid, "utf8mb4", "utf8mb4_general_ci", "")


def report_error(stage, e):
    print("result=error")
    print(f"stage={stage}")
    print(f"error_code={e.args[0] if e.args else -1}")
    print(f"error_msg={e.args[1] if len(e.args) > 1 else e}")
    sys.exit(0)


try:
    conn = pymysql.connect(host=host, port=port, user=user, password=password, connect_timeout=10, **kw)
except pymysql.err.MySQLError as e:
    report_error("login", e)
except RuntimeError as e:  # PyMySQL without PyNaCl asked for client_ed25519
    report_error("login", RuntimeError(-1, str(e)))
try:
    with conn.cursor() as cur:
        cur.execute("SELECT CURRENT_USER(), DATABASE()")
        cu, db = cur.fetchone()
except pymysql.err.MySQLError as e:
    report_error("query", e)
conn.close()
print("result=ok")
print(f"user={cu}")
print(f"db={db}")
