import sys, time, resource, torch
B,H,N,D,thr,reps = map(int, sys.argv[1:7])
torch.set_num_threads(thr)
q,k,v = (torch.randn(B,H,N,D) for _ in range(3))
f = torch.nn.functional.scaled_dot_product_attention
f(q,k,v); f(q,k,v)
def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF); return u.ru_utime + u.ru_stime
w=[];c=[]
for _ in range(reps):
    c0=cpu(); t0=time.perf_counter(); f(q,k,v); t1=time.perf_counter(); c1=cpu()
    w.append(t1-t0); c.append(c1-c0)
w.sort(); c.sort()
fl=4.0*B*H*N*N*D
print(f"B{B} H{H} N{N} D{D} t{thr}: wall min {w[0]*1e3:.3f} med {w[reps//2]*1e3:.3f} ms  cpu med {c[reps//2]*1e3:.3f} ms cpumin {c[0]*1e3:.3f}  GF/s(min wall) {fl/w[0]*1e-9:.1f}  GF/s/thread(cpu med) {fl/c[reps//2]*1e-9:.1f}")
