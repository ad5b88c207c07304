// Unbraced if, while and for bodies: a fence next to one is wrapped in braces with it.
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

atomic_int data;
atomic_int flag;
int r1, r2;

void *writer(void *arg) {
    for (int i = 0; i < 1; i++)
        atomic_store_explicit(&data, 42, memory_order_relaxed);
    while (arg != NULL)
        return NULL;
    if (arg == NULL)
        atomic_store_explicit(&flag, 1, memory_order_relaxed);
    return NULL;
}

void *reader(void *arg) {
    int n = 0;
    while (n < 1)
        n = atomic_load_explicit(&flag, memory_order_relaxed) + 1;
    if (n == 2)
        r2 = atomic_load_explicit(&data, memory_order_relaxed);
    else
        r2 = 42;
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, writer, NULL);
    pthread_create(&b, NULL, reader, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert(r2 == 42);
    return 0;
}
