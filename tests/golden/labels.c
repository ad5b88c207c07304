// Fences next to labels: a statement's slot is after its label (where a goto to the label
// lands), so a fence there is written inline after `L0: ` and on the line after `L1:;`. The
// buggy executions fall through to the label (the read-modify-write read 0): that is the
// only place for a fence after the RMW on their path.
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

atomic_int x;
atomic_int y;
int a, b;

void *t0(void *arg) {
    if (atomic_fetch_add_explicit(&x, 1, memory_order_relaxed) != 0) goto L0;
L0: a = atomic_load_explicit(&y, memory_order_relaxed);
    return NULL;
}

void *t1(void *arg) {
    if (atomic_fetch_add_explicit(&y, 1, memory_order_relaxed) != 0) goto L1;
L1:;
    b = atomic_load_explicit(&x, memory_order_relaxed);
    return NULL;
}

int main(void) {
    pthread_t p, q;
    pthread_create(&p, NULL, t0, NULL);
    pthread_create(&q, NULL, t1, NULL);
    pthread_join(p, NULL);
    pthread_join(q, NULL);
    assert(!(a == 0 && b == 0));
    return 0;
}
