// C++ store buffering with a release fence spelled `std::memory_order::release`: the fix
// strengthens it in that spelling and inserts the other fence in the file's spelling.
#include <atomic>
#include <cassert>
#include <thread>

std::atomic<int> x;
std::atomic<int> y;
int a, b;

void t1() {
    x.store(1, std::memory_order::relaxed);
    std::atomic_thread_fence(std::memory_order::release);
    a = y.load(std::memory_order::relaxed);
}

void t2() {
    y.store(1, std::memory_order::relaxed);
    b = x.load(std::memory_order::relaxed);
}

int main() {
    std::thread p(t1);
    std::thread q(t2);
    p.join();
    q.join();
    assert(!(a == 0 && b == 0));
    return 0;
}
