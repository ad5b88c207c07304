// Store buffering in C++ written with GCC builtins on plain ints: the inserted fences are
// builtins too, and no #include <atomic> is added.
#include <cassert>
#include <thread>

int x, y;
int a, b;

void t1() {
    __atomic_store_n(&x, 1, __ATOMIC_RELAXED);
    a = __atomic_load_n(&y, __ATOMIC_RELAXED);
}

void t2() {
    __atomic_store_n(&y, 1, __ATOMIC_RELAXED);
    b = __atomic_load_n(&x, __ATOMIC_RELAXED);
}

int main() {
    std::thread p(t1);
    std::thread q(t2);
    p.join();
    q.join();
    assert(!(a == 0 && b == 0));
    return 0;
}
