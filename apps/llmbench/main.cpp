#include "llmbench/cli/cli.hpp"

int main(int argc, char** argv) {
  return llmbench::cli::run(argc, argv);
}
