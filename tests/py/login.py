"""Log in with PyMySQL N times and report, per connection, which caching_sha2_password path ran.

usage: login.py HOST PORT USER PASSWORD [COUNT] [DATABASE]
prints key=value lines: connN.path = full | fast | none (none: not caching_sha2),
connN.user = CURRENT_USER(), connN.db = DATABASE(); on failure error_code / error_msg and exit 0.
"""
import sys

import pymysql
from pymysql import _auth

host, port, user, password = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
count = int(sys.argv[5]) if len(sys.argv) > 5 else 1
database = sys.argv[6] if len(sys.argv) > 6 and sys.argv[6] else None

state = {"rsa": 0, "sha2": 0}
orig_rsa = _auth.sha2_rsa_encrypt
orig_sha2 = _auth.caching_sha2_password_auth


def counting_rsa(*a, **kw):
    state["rsa"] += 1
    return orig_rsa(*a, **kw)


def counting_sha2(*a, **kw):
    state["sha2"] += 1
    return orig_sha2(*a, **kw)


_auth.sha2_rsa_encrypt = counting_rsa
_auth.caching_sha2_password_auth = counting_sha2

for i in range(1, count + 1):
    state["rsa"] = state["sha2"] = 0
    try:
        conn = pymysql.connect(host=host, port=port, user=user, password=password, database=database)
    except pymysql.err.MySQLError as e:
        code = e.args[0] if e.args else -1
        msg = e.args[1] if len(e.args) > 1 else str(e)
        print(f"error_at={i}")
        print(f"error_code={code}")
        print(f"error_msg={msg}")
        sys.exit(0)
    path = "full" if state["rsa"] else ("fast" if state["sha2"] else "none")
    with conn.cursor() as cur:
        cur.execute("SELECT CURRENT_USER(), DATABASE()")
        cu, db = cur.fetchone()
    conn.close()
    print(f"conn{i}.path={path}")
    print(f"conn{i}.user={cu}")
    print(f"conn{i}.db={db}")
