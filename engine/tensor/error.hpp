#pragma once
// Typed errors raised by the engine. Every message names the op and the shapes involved so a user can find the
// offending call without a debugger; nothing in the engine aborts on bad input.
#include <stdexcept>
#include <string>

namespace ember {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Incompatible or invalid shapes (broadcasting, matmul inner dims, reshape element counts, ...).
class ShapeError : public Error {
 public:
  using Error::Error;
};

// A dimension or an element index out of range.
class IndexError : public Error {
 public:
  using Error::Error;
};

// A tensor of the wrong kind or dtype for the op (e.g. float indices for gather).
class KindError : public Error {
 public:
  using Error::Error;
};

// Any other invalid argument (negative stride, zero groups, empty cat list, ...).
class ArgumentError : public Error {
 public:
  using Error::Error;
};

}  // namespace ember
