// Message passing without <stdatomic.h>: the fix adds the include after the last one.
#include <assert.h>
#include <pthread.h>

atomic_int data;
atomic_int flag;
int r1, r2;

void *writer(void *arg) {
    atomic_store_explicit(&data, 42, memory_order_relaxed);
    atomic_store_explicit(&flag, 1, memory_order_relaxed);
    return NULL;
}

void *reader(void *arg) {
    r1 = atomic_load_explicit(&flag, memory_order_relaxed);
    r2 = atomic_load_explicit(&data, memory_order_relaxed);
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, writer, NULL);
    pthread_create(&b, NULL, reader, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert(!(r1 == 1 && r2 == 0));
    return 0;
}
