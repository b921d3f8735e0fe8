"""A hostile HTTP server for tests/cli_hostile_server.sh: listens on 127.0.0.1 (a free port,
written to PORT_FILE), and answers every connection, whatever was asked, in one way (MODE):

  length  a Content-Length of 4 GiB, then a few bytes, then nothing (until the client goes)
  deep    a 200 whose JSON object nests 300,000 arrays
  drip    a status line, then one byte of a header every 2 seconds

It ends after LIFETIME seconds (default 60), so that a client that never gives up cannot hold the
test for ever. Usage: hostile_server.py MODE PORT_FILE [LIFETIME]
"""
import socket
import sys
import threading
import time


def answer(conn, mode, end):
    try:
        conn.settimeout(5)
        conn.recv(65536)
        if mode == "length":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 4294967296\r\n\r\n{\"queues\": [")
            while time.time() < end and conn.recv(1):
                pass
        elif mode == "deep":
            body = b'{"queues": ' + b"[" * 300000 + b"]" * 300000 + b"}"
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(body) + body)
        elif mode == "drip":
            conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            while time.time() < end:
                conn.sendall(b"a")
                time.sleep(2)
    except OSError:
        pass
    finally:
        conn.close()


def main():
    mode, port_file = sys.argv[1], sys.argv[2]
    lifetime = float(sys.argv[3]) if len(sys.argv) > 3 else 60
    end = time.time() + lifetime
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    s.settimeout(0.5)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(s.getsockname()[1]))
    import os
    os.rename(port_file + ".tmp", port_file)
    while time.time() < end:
        try:
            conn, _ = s.accept()
        except socket.timeout:
            continue
        threading.Thread(target=answer, args=(conn, mode, end), daemon=True).start()


main()
