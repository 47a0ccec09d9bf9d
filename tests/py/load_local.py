"""LOAD DATA LOCAL INFILE with PyMySQL (local_infile=True).

usage: load_local.py HOST PORT USER PASSWORD DATABASE TABLE FILE
prints affected=<rows> and count=<SELECT COUNT(*) afterwards on the same connection>.
"""
import sys

import pymysql

host, port, user, password, db, table, path = sys.argv[1:8]
conn = pymysql.connect(host=host, port=int(port), user=user, password=password, database=db,
                       local_infile=True, autocommit=True)
with conn.cursor() as cur:
    affected = cur.execute(
        f"LOAD DATA LOCAL INFILE %s INTO TABLE {table} CHARACTER SET utf8mb4 FIELDS TERMINATED BY ',' LINES TERMINATED BY '\\n'",
        (path,))
    cur.execute(f"SELECT COUNT(*) FROM {table}")
    (count,) = cur.fetchone()
conn.close()
print(f"affected={affected}")
print(f"count={count}")
