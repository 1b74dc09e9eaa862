import csv,sys
f=sys.argv[1]; col=sys.argv[2]; n=int(sys.argv[3]) if len(sys.argv)>3 else 12
rows=list(csv.reader(open(f)))
h=rows[1]; ci=h.index(col); si=h.index("Source"); ai=h.index("Warp Stall Sampling (All Samples)")
data=rows[2:]
tot=sum(int(r[ai]) for r in data if r[ai].isdigit())
colt=sum(int(r[ci]) for r in data if r[ci].isdigit())
print(f, col, "total samples", tot, "col", colt)
idx=sorted(range(len(data)), key=lambda i: -int(data[i][ci]) if data[i][ci].isdigit() else 0)[:n]
for i in idx:
    print(f"{i:6d} {data[i][ci]:>7} {data[i][si].strip()[:90]}")
