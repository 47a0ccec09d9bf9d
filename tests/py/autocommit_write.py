"""Connect with PyMySQL asking for autocommit=True, insert one row, close without COMMIT.

usage: autocommit_write.py HOST PORT USER PASSWORD DATABASE VALUE
prints key=value lines: greeting_autocommit = 0 | 1 (the status flag PyMySQL trusted),
inserted = VALUE; on failure error_code / error_msg.
"""
import sys

import pymysql

host, port, user, password, database, value = sys.argv[1], int(sys.argv[2]), *sys.argv[3:7]
try:
    conn = pymysql.connect(host=host, port=port, user=user, password=password, database=database,
                           autocommit=True)
    with conn.cursor() as cur:
        cur.execute("SELECT @@autocommit")
        print(f"session_autocommit={cur.fetchone()[0]}")
        cur.execute("INSERT INTO ac (v) VALUES (%s)", (value,))
    print(f"inserted={value}")
    conn.close()
except pymysql.err.MySQLError as e:
    print(f"error_code={e.args[0] if e.args else -1}")
    print(f"error_msg={e.args[1] if len(e.args) > 1 else e}")
