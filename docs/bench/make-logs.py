#!/usr/bin/env python3
"""Writes synthetic access logs for measuring `sluice thresholds`.

  docs/bench/make-logs.py DIR   ->  DIR/access.log (2,000,000 Combined Log Format lines, ~480 MB),
                                    DIR/access.log.gz, DIR/access.json (1,000,000 JSON lines)

Clients follow a Pareto distribution (a few heavy ones, a long tail); a third are anonymous.
"""
import datetime, gzip, random, shutil, sys, os

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/sluice-logs"
os.makedirs(out, exist_ok=True)
random.seed(7)
months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
base = datetime.datetime(2026, 10, 1)

def clients(n):
    t = 0.0
    for i in range(n):
        t += random.expovariate(4.0)
        u = int(random.paretovariate(1.2)) % 50000
        yield i, t, u

with open(os.path.join(out, "access.log"), "w", buffering=1 << 20) as f:
    buf = []
    for i, t, u in clients(2_000_000):
        d = base + datetime.timedelta(seconds=int(t))
        user = "-" if u % 3 == 0 else "user%d" % u
        buf.append('10.%d.%d.%d - %s [%02d/%s/%d:%02d:%02d:%02d +0000] "GET /api/v1/leads/%d?limit=50 HTTP/1.1" '
                   '200 %d "https://app.example.com/leads" "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 '
                   '(KHTML, like Gecko) Chrome/120.0 Safari/537.36"\n'
                   % (u % 250, u // 250 % 250, u % 7, user, d.day, months[d.month - 1], d.year,
                      d.hour, d.minute, d.second, i % 100000, 200 + i % 5000))
        if len(buf) >= 10000:
            f.write("".join(buf)); buf = []
    f.write("".join(buf))

with open(os.path.join(out, "access.log"), "rb") as src, gzip.open(os.path.join(out, "access.log.gz"), "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)

with open(os.path.join(out, "access.json"), "w", buffering=1 << 20) as f:
    buf = []
    for i, t, u in clients(1_000_000):
        buf.append('{"time":%.3f,"remote_addr":"10.%d.%d.%d","user":"%s","request":"GET /api/v1/leads/%d HTTP/1.1",'
                   '"status":200,"bytes":%d,"ua":"Mozilla/5.0 (X11; Linux x86_64)"}\n'
                   % (1790000000 + t, u % 250, u // 250 % 250, u % 7, "user%d" % u if u % 3 else "", i % 100000, i % 5000))
        if len(buf) >= 10000:
            f.write("".join(buf)); buf = []
    f.write("".join(buf))
