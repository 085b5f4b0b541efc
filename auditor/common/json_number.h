#pragma once
// Integers read from a file. nlohmann's get<int>() casts a float such as 1e300 straight to int, which
// is undefined behaviour, and wraps an integer past the type's range; a file may hold either. These
// readers take an integer in range, or a float with no fraction in range, and otherwise throw a
// json::type_error / json::out_of_range that names the value, as the other loading mistakes do.
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>

namespace repro_audit {

template <typename T>
T json_integer(const nlohmann::json& value) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  using limits = std::numeric_limits<T>;
  using nlohmann::json;
  if (value.is_number_unsigned()) {
    const auto v = value.get<json::number_unsigned_t>();
    if (v <= static_cast<std::make_unsigned_t<T>>(limits::max())) return static_cast<T>(v);
  } else if (value.is_number_integer()) {
    const auto v = value.get<json::number_integer_t>();
    if constexpr (std::is_signed_v<T>) {
      if (v >= static_cast<json::number_integer_t>(limits::min()) &&
          v <= static_cast<json::number_integer_t>(limits::max()))
        return static_cast<T>(v);
    } else if (v >= 0 && static_cast<json::number_unsigned_t>(v) <= limits::max()) {
      return static_cast<T>(v);
    }
  } else if (value.is_number_float()) {
    const auto v = value.get<double>();
    // limits::max() + 1 is a power of two, exact as a double; max() itself may round up to it.
    const double above_max = std::ldexp(1.0, limits::digits);
    if (std::isfinite(v) && v == std::trunc(v) && v >= static_cast<double>(limits::min()) && v < above_max)
      return static_cast<T>(v);
  } else {
    throw json::type_error::create(302, "type must be an integer, but is " + std::string(value.type_name()), &value);
  }
  throw json::out_of_range::create(406, "integer " + value.dump() + " is out of range here", &value);
}

// The integer at `key`, or `fallback` when the key is absent (like json::value, but checked).
template <typename T>
T json_integer_or(const nlohmann::json& object, const char* key, T fallback) {
  const auto it = object.find(key);
  return it == object.end() ? fallback : json_integer<T>(*it);
}

// The value at `key` (integers read by json_integer), or `fallback` when the key is absent. A wrong
// type or value throws the same kind of json exception, naming the field: a reader of a large file
// then says which of its fields is wrong ("\"runs\": type must be an integer, but is string").
template <typename T>
T json_field_or(const nlohmann::json& object, const char* key, T fallback) {
  using nlohmann::json;
  const auto it = object.find(key);
  if (it == object.end()) return fallback;
  const auto named = [&](const json::exception& error) {
    const std::string what = error.what();
    const auto end = what.find("] ");
    return "\"" + std::string(key) + "\": " + (end == std::string::npos ? what : what.substr(end + 2));
  };
  try {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      return json_integer<T>(*it);
    else
      return it->template get<T>();
  } catch (const json::type_error& error) {
    throw json::type_error::create(error.id, named(error), nullptr);
  } catch (const json::out_of_range& error) {
    throw json::out_of_range::create(error.id, named(error), nullptr);
  } catch (const json::other_error& error) {
    throw json::other_error::create(error.id, named(error), nullptr);
  }
}

// The value at `key`, which must be there (json::out_of_range 403 otherwise, as json::at says).
template <typename T>
T json_field(const nlohmann::json& object, const char* key) {
  if (!object.contains(key))
    throw nlohmann::json::out_of_range::create(403, "key '" + std::string(key) + "' not found", nullptr);
  return json_field_or<T>(object, key, T{});
}

// A time or a count at `key`, or `fallback` when the key is absent: a number of the type that is not
// negative (nor infinite), else the json exception names the field. A negative median or run count
// read from a file would be shown and written back as if measured.
template <typename T>
T json_amount_or(const nlohmann::json& object, const char* key, T fallback) {
  const T value = json_field_or<T>(object, key, fallback);
  if (value < T{} || !std::isfinite(static_cast<double>(value)))
    throw nlohmann::json::out_of_range::create(
        406, "\"" + std::string(key) + "\": must be a time or count of 0 or more, not " + object.at(key).dump(),
        nullptr);
  return value;
}

}  // namespace repro_audit
