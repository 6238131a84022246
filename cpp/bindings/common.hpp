// What every binding shares: the error convention (guarded), wasm views, JS arrays, shared values.
//
// Bindings marshal JS values to the core and back. No math and no policy here: every check,
// default and message comes from the core.
//
// One error convention: every fallible binding returns a val that is either its result
// (undefined when it has none) or { error: message }, never throws into JS; the JS API
// (web/api/attention-lens-api.js) passes each through one unwrap() that throws
// new Error(message), so the module keeps working after any bad input. Results never carry an
// `error` key. Views into wasm memory (typed_memory_view) are copied by the JS API at once.
#pragma once

#include <emscripten/val.h>

#include <cstddef>
#include <exception>
#include <new>
#include <string>
#include <vector>

namespace attn {
class AttentionLayer;
struct Step;
struct ModelConfig;
}  // namespace attn

namespace attn::bindings {

using emscripten::val;

// { error: message }.
val error_value(const char* message);

// Runs `body` (returning the result as a val); returns its result or { error: message }.
template <class Body>
val guarded(Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return error_value("out of memory: the request needs more memory than the page can have");
  } catch (const std::exception& e) {
    return error_value(e.what());
  } catch (...) {
    return error_value("unexpected internal error");
  }
}

// A view into wasm memory. The JS API copies it at once: memory growth detaches views.
template <class T>
val view_of(const T* data, std::size_t count) {
  return val(emscripten::typed_memory_view(count, data));
}

template <class T>
std::vector<T> vector_or_empty(const val& array) {
  if (array.isUndefined() || array.isNull()) return {};
  return emscripten::convertJSArrayToNumberVector<T>(array);
}

// A JS array of to_js(item) for each of `items`, in order.
template <class Range, class ToJs>
val array_of(const Range& items, ToJs to_js) {
  val out = val::array();
  for (const auto& item : items) out.call<void>("push", to_js(item));
  return out;
}

// A JS array of numbers (a shape, ids, frequencies) or of strings.
template <class Range>
val number_array(const Range& items) {
  return array_of(items, [](auto value) { return value; });
}
template <class Range>
val string_array(const Range& items) {
  return array_of(items, [](const auto& item) { return std::string(item); });
}

// {id, title, equation, shape, head, rows, cols, data}: one traced step of `layer`, the id and
// axes from the catalog, the title and equation rendered by the core (data a view the JS API
// copies).
val step_value(const attn::AttentionLayer& layer, const attn::Step& s);

// A model's config as createModel's options: { vocab, context, dModel, heads, layers,
// positional, layerNorm, mlp, tied, bias, gelu, seed }.
val model_config_value(const attn::ModelConfig& config);

}  // namespace attn::bindings
