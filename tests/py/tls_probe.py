"""Log in with PyMySQL, over TLS or not, and report what the client saw.

usage: tls_probe.py HOST PORT USER PASSWORD CA [SQL]
CA: PEM file the server certificate is verified against (hostname checked too), or "-" for a
plain connection. Prints key=value lines: tls=1|0, tls.version, tls.peer_sha256 (SHA-256 of
the server certificate's DER), auth.path = full_clear | full_rsa | fast | none, and the first
row of SQL as sql.result; on failure error_code / error_msg and exit 0.
"""
import hashlib
import ssl
import sys

import pymysql
from pymysql import _auth

host, port, user, password, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
sql = sys.argv[6] if len(sys.argv) > 6 else None

state = {"path": "none"}
orig_roundtrip = _auth._roundtrip
orig_rsa = _auth.sha2_rsa_encrypt
orig_sha2 = _auth.caching_sha2_password_auth


def roundtrip(conn, data):
    if data == conn.password + b"\0":
        state["path"] = "full_clear"
    return orig_roundtrip(conn, data)


def rsa(*a, **kw):
    state["path"] = "full_rsa"
    return orig_rsa(*a, **kw)


def sha2(*a, **kw):
    state["path"] = "fast"
    return orig_sha2(*a, **kw)


_auth._roundtrip = roundtrip
_auth.sha2_rsa_encrypt = rsa
_auth.caching_sha2_password_auth = sha2

kwargs = {} if ca == "-" else {"ssl": {"ca": ca, "check_hostname": True}}
try:
    conn = pymysql.connect(host=host, port=port, user=user, password=password, **kwargs)
except pymysql.err.MySQLError as e:
    print(f"error_code={e.args[0] if e.args else -1}")
    print(f"error_msg={e.args[1] if len(e.args) > 1 else e}")
    sys.exit(0)
sock = conn._sock
if isinstance(sock, ssl.SSLSocket):
    print("tls=1")
    print(f"tls.version={sock.version()}")
    print(f"tls.peer_sha256={hashlib.sha256(sock.getpeercert(True)).hexdigest()}")
else:
    print("tls=0")
print(f"auth.path={state['path']}")
if sql:
    with conn.cursor() as cur:
        cur.execute(sql)
        row = cur.fetchone()
    print(f"sql.result={row[0] if row else ''}")
conn.close()
