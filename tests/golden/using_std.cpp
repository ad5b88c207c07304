// C++ with `using namespace std;` and unqualified orders: fences are written unqualified.
#include <atomic>
#include <cassert>
#include <thread>

using namespace std;

atomic<int> msg;
atomic<int> flag;
int r1, r2;

void writer() {
    msg.store(42, memory_order_relaxed);
    flag.store(1, memory_order_relaxed);
}

void reader() {
    r1 = flag.load(memory_order_relaxed);
    r2 = msg.load(memory_order_relaxed);
}

int main() {
    thread w(writer);
    thread r(reader);
    w.join();
    r.join();
    assert(!(r1 == 1 && r2 == 0));
    return 0;
}
