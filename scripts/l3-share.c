// How much of the shared last-level cache is left to one CPU, over time: an independent
// check of mem.latency's L3 end and of the shared-cache probe (harness/machine/cache.rs),
// sharing no code with sysmeter. A random cyclic pointer chase (one element per 64-byte
// line, fully random order) over 2, 3, 4, 6, 8, 12, 16, 24 and 48 MiB; each round prints the
// time and, per size, the best of three timed passes after one warm pass, in ns per load.
//
//   gcc -O2 -o /tmp/l3-share scripts/l3-share.c && /tmp/l3-share CPU ROUNDS
//
// Read it as: a size at the L3's latency (~12-20 ns here) fits the share left to us in that
// round; at DRAM's (~100-180 ns) it does not.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include <sched.h>
#include <string.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
static void **build(size_t bytes){
  size_t n=bytes/64; void **buf=aligned_alloc(4096,bytes); size_t *perm=malloc(n*sizeof(size_t));
  for(size_t i=0;i<n;i++)perm[i]=i;
  for(size_t i=n-1;i>0;i--){size_t j=((uint64_t)rand()*RAND_MAX+rand())%(i+1);size_t t=perm[i];perm[i]=perm[j];perm[j]=t;}
  for(size_t i=0;i<n;i++)buf[perm[i]*8]=&buf[perm[(i+1)%n]*8];
  free(perm);return buf;}
static double chase(void **p,size_t loads){void **q=p;double t=now();for(size_t i=0;i<loads;i++)q=*q;double e=now()-t;if(q==0)puts("");return e/loads;}
int main(int argc,char**argv){
  cpu_set_t s;CPU_ZERO(&s);CPU_SET(atoi(argv[1]),&s);sched_setaffinity(0,sizeof s,&s);
  int rounds=atoi(argv[2]);
  size_t sizes[]={2,3,4,6,8,12,16,24,48};int ns=9;void **b[9];
  for(int k=0;k<ns;k++)b[k]=build(sizes[k]<<20);
  for(int r=0;r<rounds;r++){
    printf("%.1f",now()/1e9);
    for(int k=0;k<ns;k++){size_t n=(sizes[k]<<20)/64;chase(b[k],n);double best=1e9;for(int t=0;t<3;t++){double x=chase(b[k],n);if(x<best)best=x;}printf(" %5.1f",best);}
    printf("\n");fflush(stdout);
  }
}
