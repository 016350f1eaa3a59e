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

// A device backend failed or cannot do what was asked (a lost device, a missing feature, a driver error). Backends
// derive their own error types from it, so callers (the C ABI among them) handle device failures without knowing
// which backend raised them.
class DeviceError : public Error {
 public:
  using Error::Error;
};

// The device was lost (Vulkan's VK_ERROR_DEVICE_LOST: a driver reset, a GPU hang, a removed GPU). Nothing more runs
// on it: every later use of the same device raises this too, at once, until the host frees what it made on it and
// creates (or adopts) the device again.
class DeviceLostError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

// An op cannot be captured into a recorded plan (issue 17: Vulkan plans): it needs a CPU round trip (a read back to
// the host, a check that reads a flag) or records commands Ember cannot replay. Raised while a plan captures; the
// runtime Sequential prefixes the layer that ran it, so the message names the op.
class CaptureError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

// A device backend ran out of device or host memory (or a tensor exceeds what the device can address).
class OutOfMemoryError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

}  // namespace ember
