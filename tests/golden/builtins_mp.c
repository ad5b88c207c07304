// Message passing written with GCC builtins on plain ints: the fix is spelled with builtins
// (`__atomic_thread_fence(__ATOMIC_X)`) and adds no #include (builtins need none).
#include <assert.h>
#include <pthread.h>

int data;
int ready;

void *producer(void *arg) {
    data = 42;
    __atomic_store_n(&ready, 1, __ATOMIC_RELAXED);
    return NULL;
}

void *consumer(void *arg) {
    while (!__atomic_load_n(&ready, __ATOMIC_RELAXED))
        ;
    assert(data == 42);
    return NULL;
}

int main(void) {
    pthread_t p, c;
    pthread_create(&p, NULL, producer, NULL);
    pthread_create(&c, NULL, consumer, NULL);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    return 0;
}
