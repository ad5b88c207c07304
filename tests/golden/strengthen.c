// Store buffering with release fences: the fix strengthens them to seq_cst in place.
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

atomic_int x;
atomic_int y;
int a, b;

void *t1(void *arg) {
    atomic_store_explicit(&x, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    a = atomic_load_explicit(&y, memory_order_relaxed);
    return NULL;
}

void *t2(void *arg) {
    atomic_store_explicit(&y, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release); b = atomic_load_explicit(&x, memory_order_relaxed);
    return NULL;
}

int main(void) {
    pthread_t p, q;
    pthread_create(&p, NULL, t1, NULL);
    pthread_create(&q, NULL, t2, NULL);
    pthread_join(p, NULL);
    pthread_join(q, NULL);
    assert(!(a == 0 && b == 0));
    return 0;
}
