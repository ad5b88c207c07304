// Store buffering with builtin release fences, one order written as GCC's number: the fix
// strengthens each in its own spelling (`__ATOMIC_RELEASE` -> `__ATOMIC_SEQ_CST`, 3 -> 5).
#include <assert.h>
#include <pthread.h>

int x, y;
int a, b;

void *t1(void *arg) {
    __atomic_store_n(&x, 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    a = __atomic_load_n(&y, __ATOMIC_RELAXED);
    return NULL;
}

void *t2(void *arg) {
    __atomic_store_n(&y, 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(3);
    b = __atomic_load_n(&x, __ATOMIC_RELAXED);
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
