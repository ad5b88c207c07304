// Message passing with relaxed atomics, plus a statistics counter both threads bump without
// synchronisation, its race silenced by `fensyn: ignore[race]` comments (one trailing, one on
// the line before). `fix` repairs the message passing and leaves the silenced race alone; the
// acquire fence it writes lands between the lone comment and `hits++`, which the comment still
// silences (a fence line is skipped).
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

int data;
int hits; /* statistics only: racy on purpose */
atomic_int ready;

void *producer(void *arg)
{
	data = 42;
	hits++; // fensyn: ignore[race]
	atomic_store_explicit(&ready, 1, memory_order_relaxed);
	return NULL;
}

void *consumer(void *arg)
{
	int r = atomic_load_explicit(&ready, memory_order_relaxed);
	// fensyn: ignore[race]
	hits++;
	if (r)
		assert(data == 42);
	return NULL;
}

int main(void)
{
	pthread_t p, c;
	pthread_create(&p, NULL, producer, NULL);
	pthread_create(&c, NULL, consumer, NULL);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	return 0;
}
