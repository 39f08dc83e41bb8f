// emu_transform: the emulator's source rewrite as a command, for scripts/emulate-cuda-sft.sh and
// checks by hand: prints cuset::emu::transform_program(FILE) on standard output; exit 3 with the
// one-line reason on standard error when the program cannot be rewritten, 2 on a usage error.
//   emu_transform FILE.cu > FILE.cpp
#include <fstream>
#include <iostream>
#include <sstream>

#include "cuset/core/error.h"
#include "cuset/emu/transform.h"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: emu_transform FILE.cu\n";
        return 2;
    }
    std::ifstream in(argv[1], std::ios::binary);
    if (!in) {
        std::cerr << "emu_transform: cannot read " << argv[1] << "\n";
        return 3;
    }
    std::ostringstream text;
    text << in.rdbuf();
    try {
        std::cout << cuset::emu::transform_program(text.str());
    } catch (const cuset::Error& e) {
        std::cerr << argv[1] << ": " << e.what() << "\n";
        return 3;
    }
    return std::cout.flush() ? 0 : 4;
}
