// C++ message passing without <atomic>: the fix adds it after the last include.
#include <cassert>
#include <thread>

std::atomic<int> msg;
std::atomic<int> flag;
int r1, r2;

void writer() {
    msg.store(42, std::memory_order_relaxed);
    flag.store(1, std::memory_order_relaxed);
}

void reader() {
    r1 = flag.load(std::memory_order_relaxed);
    r2 = msg.load(std::memory_order_relaxed);
}

int main() {
    std::thread w(writer);
    std::thread r(reader);
    w.join();
    r.join();
    assert(!(r1 == 1 && r2 == 0));
    return 0;
}
