# PyMySQL probe for the steering tests: connects to argv[1]:argv[2], runs a statement marked
# argv[3], and prints both socket ends, the port of the server that answered, and how that server
# sees the connection (its processlist host is `ip:port` of the peer it talks to). Optional
# argv[4], argv[5]: user and password (default root without password).
import sys, pymysql
host, port, marker = sys.argv[1], int(sys.argv[2]), sys.argv[3]
user = sys.argv[4] if len(sys.argv) > 4 else "root"
password = sys.argv[5] if len(sys.argv) > 5 else ""
c = pymysql.connect(host=host, port=port, user=user, password=password, connect_timeout=5, read_timeout=10)
cur = c.cursor()
# The server's own row for this statement, found by its text (a gateway in between answers
# CONNECTION_ID() with its own session id, which the server's processlist does not know).
cur.execute("SELECT %s, @@port, (SELECT host FROM information_schema.processlist WHERE info LIKE %s LIMIT 1)",
            (marker, "%probe-" + marker + "-row%"))
row = cur.fetchone()
print("peer=%s:%d" % c._sock.getpeername()[:2])
print("sock=%s:%d" % c._sock.getsockname()[:2])
print("served_by=%d" % row[1])
print("server_sees=%s" % row[2])
c.close()
