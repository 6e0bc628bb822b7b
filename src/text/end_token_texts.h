#pragma once

#include <string_view>

namespace cohort::text {

// Texts llama.cpp recognises as end-of-turn (when the vocabulary names no eot id) and as end
// of generation. Both tokenizers treat such tokens as control tokens whatever their stored
// type.
inline constexpr std::string_view kEotTexts[] = {
    "<|eot_id|>",      "<|im_end|>", "<|end|>", "<end_of_turn>",         "<|endoftext|>",
    "<|end_of_text|>", "<EOT>",      "_<EOT>",  "<｜end▁of▁sentence｜>", "<end_of_utterance>"};
inline constexpr std::string_view kEogTexts[] = {
    "<|eot_id|>", "<|im_end|>",    "<|end|>",         "<|return|>",
    "<|call|>",   "<end_of_turn>", "<|endoftext|>",   "<|eom_id|>",
    "<EOT>",      "_<EOT>",        "<|end_of_text|>", "<end_of_utterance>"};

}  // namespace cohort::text
