// stats: work in progress (filled in by its issue).
#include <cstddef>
