// Model names as clients write them. A served model is named by its file name
// ("stories260K.gguf"); clients also write it without the ".gguf" extension or with Ollama's
// ":latest" tag. Names are only ever compared with the names a server lists, never joined to
// a directory, and names that look like paths are refused outright, so a request cannot
// reach a file outside the models a server offers.
#pragma once

#include <string_view>

namespace cohort::runtime {

// True when `requested` names `served` (exactly, or without ".gguf" / ":latest").
bool model_names_match(std::string_view requested, std::string_view served);

// False for names that could step out of a directory or hide in one: empty, ".", "..", or
// containing '/', '\\', a NUL or another control character.
bool is_plain_model_name(std::string_view name);

}  // namespace cohort::runtime
