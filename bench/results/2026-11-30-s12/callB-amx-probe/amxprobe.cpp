// Scratch: AMX tile throughput on the Xeon, resident tiles vs operands from L1/L2/L3, with and
// without software prefetch; 1 thread and all threads.
#include <immintrin.h>
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

struct alignas(64) Cfg { uint8_t palette=1, start=0; uint8_t r[14]={}; uint16_t bpr[16]={}; uint8_t rows[16]={}; };
static Cfg cfg;
static void tcfg() { for (int t=0;t<8;++t){cfg.bpr[t]=64;cfg.rows[t]=16;} _tile_loadconfig(&cfg); }

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// resident: 4 dots per iteration
static double resident(int64_t iters) {
  _tile_zero(0);_tile_zero(1);_tile_zero(2);_tile_zero(3);_tile_zero(4);_tile_zero(5);_tile_zero(6);_tile_zero(7);
  double t0 = now();
  for (int64_t i=0;i<iters;++i){ _tile_dpbf16ps(0,4,6); _tile_dpbf16ps(1,4,7); _tile_dpbf16ps(2,5,6); _tile_dpbf16ps(3,5,7);}
  static float sink[256]; _tile_stored(0, sink, 64);
  return now()-t0;
}

// scores-like: A = 2 row tiles of a [32][dp] bf16 block; B = K^T tiles, key tiles in [nb][dp/2][16] dwords
template <int PF, int ORD>
static void scores(const uint16_t* q, int64_t dp, const uint32_t* k, int64_t key_tiles, float* s) {
  const int64_t pairs = dp/2;
  for (int64_t j=0;j<key_tiles;j+=2){
    _tile_zero(0);_tile_zero(1);_tile_zero(2);_tile_zero(3);
    const uint32_t* k0 = k + j*pairs*16; const uint32_t* k1 = k0 + pairs*16;
    if (ORD == 2) {
      const int64_t steps = dp/32;
      _tile_loadd(4, q, dp*2); _tile_loadd(6, k0, 64); _tile_loadd(5, q+16*dp, dp*2); _tile_loadd(7, k1, 64);
      for (int64_t st=0; st<steps; ++st){
        const int64_t nx = st + 1 < steps ? st + 1 : st;
        _tile_dpbf16ps(0,4,6); _tile_dpbf16ps(2,5,6); _tile_loadd(6, k0+nx*256, 64);
        _tile_dpbf16ps(1,4,7); _tile_loadd(4, q+32*nx, dp*2);
        _tile_dpbf16ps(3,5,7); _tile_loadd(5, q+16*dp+32*nx, dp*2); _tile_loadd(7, k1+nx*256, 64);
      }
    } else
    for (int64_t st=0; st<dp/32; ++st){
      if (PF) { const char* n0=(const char*)(k0+(st+PF)*256); const char* n1=(const char*)(k1+(st+PF)*256);
        for (int l=0;l<16;++l){ _mm_prefetch(n0+64*l,_MM_HINT_T0); _mm_prefetch(n1+64*l,_MM_HINT_T0);} }
      if (ORD == 0) {
      _tile_loadd(4, q+32*st, dp*2); _tile_loadd(5, q+16*dp+32*st, dp*2);
      _tile_loadd(6, k0+st*256, 64); _tile_loadd(7, k1+st*256, 64);
      _tile_dpbf16ps(0,4,6); _tile_dpbf16ps(1,4,7); _tile_dpbf16ps(2,5,6); _tile_dpbf16ps(3,5,7);
      } else {
      _tile_loadd(4, q+32*st, dp*2); _tile_loadd(6, k0+st*256, 64); _tile_dpbf16ps(0,4,6);
      _tile_loadd(7, k1+st*256, 64); _tile_dpbf16ps(1,4,7);
      _tile_loadd(5, q+16*dp+32*st, dp*2); _tile_dpbf16ps(2,5,6); _tile_dpbf16ps(3,5,7);
      }
    }
    _tile_stored(0, s+16*j, 256*4); _tile_stored(1, s+16*j+16, 256*4);
    _tile_stored(2, s+16*256+16*j, 256*4); _tile_stored(3, s+16*256+16*j+16, 256*4);
  }
}
// values-like: O[32][ldo] += P[32][keys] V; V chunks [chunks][d_tiles][16][16] dwords
template <int PF, int ORD>
static void values(const uint16_t* p, int64_t keys, const uint32_t* v, int64_t d_tiles, float* o, int64_t ldo) {
  const int64_t chunks = keys/32;
  for (int64_t t=0;t<d_tiles;t+=2){
    float* oo = o+16*t;
    _tile_loadd(0, oo, ldo*4); _tile_loadd(1, oo+16, ldo*4); _tile_loadd(2, oo+16*ldo, ldo*4); _tile_loadd(3, oo+16*ldo+16, ldo*4);
    if (ORD == 2) {
      const uint32_t* vb = v + t*256;
      _tile_loadd(4, p, keys*2); _tile_loadd(6, vb, 64); _tile_loadd(5, p+16*keys, keys*2); _tile_loadd(7, vb+256, 64);
      for (int64_t c=0;c<chunks;++c){
        const int64_t nx = c + 1 < chunks ? c + 1 : c;
        const uint32_t* vn = v + (nx*d_tiles+t)*256;
        _tile_dpbf16ps(0,4,6); _tile_dpbf16ps(2,5,6); _tile_loadd(6, vn, 64);
        _tile_dpbf16ps(1,4,7); _tile_loadd(4, p+32*nx, keys*2);
        _tile_dpbf16ps(3,5,7); _tile_loadd(5, p+16*keys+32*nx, keys*2); _tile_loadd(7, vn+256, 64);
      }
    } else
    for (int64_t c=0;c<chunks;++c){
      const uint32_t* v0 = v + (c*d_tiles+t)*256;
      if (PF) { const char* n0=(const char*)(v0+PF*d_tiles*256); for(int l=0;l<32;++l) _mm_prefetch(n0+64*l,_MM_HINT_T0);}
      if (ORD == 0) {
      _tile_loadd(4, p+32*c, keys*2); _tile_loadd(5, p+16*keys+32*c, keys*2);
      _tile_loadd(6, v0, 64); _tile_loadd(7, v0+256, 64);
      _tile_dpbf16ps(0,4,6); _tile_dpbf16ps(1,4,7); _tile_dpbf16ps(2,5,6); _tile_dpbf16ps(3,5,7);
      } else {
      _tile_loadd(4, p+32*c, keys*2); _tile_loadd(6, v0, 64); _tile_dpbf16ps(0,4,6);
      _tile_loadd(7, v0+256, 64); _tile_dpbf16ps(1,4,7);
      _tile_loadd(5, p+16*keys+32*c, keys*2); _tile_dpbf16ps(2,5,6); _tile_dpbf16ps(3,5,7);
      }
    }
    _tile_stored(0, oo, ldo*4); _tile_stored(1, oo+16, ldo*4); _tile_stored(2, oo+16*ldo, ldo*4); _tile_stored(3, oo+16*ldo+16, ldo*4);
  }
}

struct Buf { std::vector<uint16_t> q; std::vector<uint32_t> k, v; std::vector<float> s, o; std::vector<uint16_t> p; };

int main(int argc, char** argv) {
  if (syscall(SYS_arch_prctl, 0x1023, 18) != 0) { printf("no AMX permission\n"); return 1; }
  const int64_t dp = argc > 1 ? atoll(argv[1]) : 512;
  const int nthreads_all = omp_get_max_threads();
  for (int threads : {1, nthreads_all}) {
    // resident
    double gf=0;
#pragma omp parallel num_threads(threads) reduction(+:gf)
    { tcfg(); int64_t it=2000000; resident(1000); double t=resident(it); gf += it*4*16*16*32*2/t/1e9; _tile_release(); }
    {
      double lt=0;
#pragma omp parallel num_threads(threads) reduction(+:lt)
      { tcfg(); static thread_local uint32_t buf[4096] __attribute__((aligned(64)));
        for (int i=0;i<4096;++i) buf[i]=0x3f803f80u;
        int64_t it=2000000; double t0=now();
        for (int64_t i=0;i<it;++i){ _tile_loadd(4,buf,64); _tile_loadd(5,buf+256,64); _tile_loadd(6,buf+512,64); _tile_loadd(7,buf+768,64);}
        lt += (now()-t0)/(it*4)*1e9; _tile_release(); }
      printf("threads %d load-only: %.2f ns per 1 KiB tile load from L1\n", threads, lt/threads);
    }
    printf("threads %d dp %ld resident: %.0f GFLOP/s total, %.0f per thread\n", threads, dp, gf, gf/threads);
    // key span: number of keys in K buffer the scores walk touches per "group" (128 = one block in L2) vs whole 4096 stream (8 MiB at dp 512 → L3)
    for (int64_t span_keys : {int64_t(128), int64_t(4096)}) for (int combo : {0, 1, 2, 3, 4}) { const int pf = combo & 1, ord = combo >> 1;
      double gs=0, gv=0;
#pragma omp parallel num_threads(threads) reduction(+:gs,gv)
      {
        tcfg();
        Buf b; b.q.assign(32*dp, 0x3f80); b.k.assign(span_keys*dp/2, 0x3f803f80u); b.v.assign(span_keys*dp/2, 0x3f803f80u);
        b.s.assign(32*256, 0.f); b.o.assign(32*dp, 0.f); b.p.assign(32*128, 0x3c00);
        const int64_t d_tiles = dp/16;
        int reps = span_keys == 128 ? 2000 : 60;
        for (int w=0; w<2; ++w) {
          double t0=now();
          for (int r=0;r<reps;++r) for (int64_t kb=0; kb<span_keys; kb+=128) {
            const uint32_t* kk = b.k.data() + kb*dp/2;
            if (combo==0) scores<0,0>(b.q.data(), dp, kk, 8, b.s.data()); else if (combo==1) scores<1,0>(b.q.data(), dp, kk, 8, b.s.data()); else if (combo==2) scores<0,1>(b.q.data(), dp, kk, 8, b.s.data()); else if (combo==3) scores<1,1>(b.q.data(), dp, kk, 8, b.s.data()); else scores<0,2>(b.q.data(), dp, kk, 8, b.s.data());
          }
          double t1=now();
          for (int r=0;r<reps;++r) for (int64_t kb=0; kb<span_keys; kb+=128) {
            const uint32_t* vv = b.v.data() + kb*dp/2;
            if (combo==0) values<0,0>(b.p.data(), 128, vv, d_tiles, b.o.data(), dp); else if (combo==1) values<1,0>(b.p.data(), 128, vv, d_tiles, b.o.data(), dp); else if (combo==2) values<0,1>(b.p.data(), 128, vv, d_tiles, b.o.data(), dp); else if (combo==3) values<1,1>(b.p.data(), 128, vv, d_tiles, b.o.data(), dp); else values<0,2>(b.p.data(), 128, vv, d_tiles, b.o.data(), dp);
          }
          double t2=now();
          double flop = 2.0*32*span_keys*dp*reps;
          if (w==1) { gs += flop/(t1-t0)/1e9; gv += flop/(t2-t1)/1e9; }
        }
        _tile_release();
      }
      printf("threads %d dp %ld keys %ld order %d prefetch %d: scores %.0f GFLOP/s/thread, values %.0f GFLOP/s/thread\n", threads, dp, span_keys, ord, pf, gs/threads, gv/threads);
    }
  }
}
