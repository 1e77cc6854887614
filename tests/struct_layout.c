/*
 * struct_layout.c — prints the size and every field's offset of the public
 * structs the Python package mirrors with ctypes (python/attend/_lib.py), one
 * line each: "STRUCT size N" and "STRUCT FIELD OFFSET". python/tests/
 * test_struct_layout.py compares them with the ctypes classes, so a field
 * added, moved or resized in C fails there naming it. A field named here that
 * C lacks fails to compile.
 */
#include <stddef.h>
#include <stdio.h>

#include "attend.h"

#define S(T) printf(#T " sizeof %zu\n", sizeof(T))
#define F(T, f) printf(#T " " #f " %zu\n", offsetof(T, f))

int main(void) {
    S(attend_error);
    F(attend_error, status), F(attend_error, msg);
    S(attend_score_config);
    F(attend_score_config, kind), F(attend_score_config, Dq), F(attend_score_config, Dk), F(attend_score_config, A);
    F(attend_score_config, additive_bias), F(attend_score_config, scale);
    S(attend_score_params);
    F(attend_score_params, W), F(attend_score_params, Wq), F(attend_score_params, Wk), F(attend_score_params, b);
    F(attend_score_params, v);
    S(attend_score_grads);
    F(attend_score_grads, W), F(attend_score_grads, Wq), F(attend_score_grads, Wk), F(attend_score_grads, b);
    F(attend_score_grads, v);
    S(attend_mha_config);
    F(attend_mha_config, E), F(attend_mha_config, H), F(attend_mha_config, kdim), F(attend_mha_config, vdim);
    F(attend_mha_config, bias);
    S(attend_mha_params);
    F(attend_mha_params, Wq), F(attend_mha_params, Wk), F(attend_mha_params, Wv), F(attend_mha_params, bq);
    F(attend_mha_params, bk), F(attend_mha_params, bv), F(attend_mha_params, Wo), F(attend_mha_params, bo);
    S(attend_mha_grads);
    F(attend_mha_grads, Wq), F(attend_mha_grads, Wk), F(attend_mha_grads, Wv), F(attend_mha_grads, bq);
    F(attend_mha_grads, bk), F(attend_mha_grads, bv), F(attend_mha_grads, Wo), F(attend_mha_grads, bo);
    S(attend_attention_options);
    F(attend_attention_options, size), F(attend_attention_options, normalizer), F(attend_attention_options, valid);
    F(attend_attention_options, allowed), F(attend_attention_options, causal);
    S(attend_model_config);
    F(attend_model_config, cell), F(attend_model_config, decoder), F(attend_model_config, score);
    F(attend_model_config, src_vocab), F(attend_model_config, tgt_vocab), F(attend_model_config, emb);
    F(attend_model_config, enc_hidden), F(attend_model_config, enc_layers), F(attend_model_config, dec_hidden);
    F(attend_model_config, attn), F(attend_model_config, max_batch), F(attend_model_config, max_src_len);
    F(attend_model_config, max_tgt_len), F(attend_model_config, dec_layers), F(attend_model_config, coverage);
    F(attend_model_config, copy), F(attend_model_config, monotonic), F(attend_model_config, normalizer);
    F(attend_model_config, encoder), F(attend_model_config, heads), F(attend_model_config, positions);
    F(attend_model_config, post_norm), F(attend_model_config, max_positions), F(attend_model_config, kernel);
    F(attend_model_config, conv_relu);
    F(attend_model_config, uniform_attention);
    S(attend_model_tensor);
    F(attend_model_tensor, name), F(attend_model_tensor, ndim), F(attend_model_tensor, shape);
    F(attend_model_tensor, numel), F(attend_model_tensor, data), F(attend_model_tensor, grad);
    S(attend_optim_config);
    F(attend_optim_config, kind), F(attend_optim_config, lr), F(attend_optim_config, beta1);
    F(attend_optim_config, beta2), F(attend_optim_config, eps), F(attend_optim_config, weight_decay);
    F(attend_optim_config, momentum), F(attend_optim_config, clip_norm), F(attend_optim_config, warmup_steps);
    F(attend_optim_config, decay_steps), F(attend_optim_config, min_lr);
    S(attend_train_options);
    F(attend_train_options, dropout), F(attend_train_options, label_smoothing), F(attend_train_options, sampling_prob);
    F(attend_train_options, sampling_ramp), F(attend_train_options, coverage_loss);
    F(attend_train_options, guided_alignment);
    F(attend_train_options, reference), F(attend_train_options, frozen_attention), F(attend_train_options, adversarial);
    S(attend_forward_options);
    F(attend_forward_options, size), F(attend_forward_options, dropout), F(attend_forward_options, dropout_key);
    F(attend_forward_options, label_smoothing), F(attend_forward_options, sampling_prob);
    F(attend_forward_options, sampling_key), F(attend_forward_options, coverage_loss);
    F(attend_forward_options, guided_alignment), F(attend_forward_options, monotonic_noise);
    F(attend_forward_options, monotonic_key), F(attend_forward_options, row0);
    F(attend_forward_options, reference), F(attend_forward_options, frozen_attention);
    F(attend_forward_options, adversarial);
    S(attend_beam_options);
    F(attend_beam_options, alpha), F(attend_beam_options, coverage_penalty);
    S(attend_decode_options);
    F(attend_decode_options, size), F(attend_decode_options, beam), F(attend_decode_options, nbest);
    F(attend_decode_options, max_len), F(attend_decode_options, alpha), F(attend_decode_options, coverage_penalty),
        F(attend_decode_options, align_head);
    S(attend_restore_options);
    F(attend_restore_options, size), F(attend_restore_options, src_vocab), F(attend_restore_options, tgt_vocab);
    F(attend_restore_options, tok), F(attend_restore_options, anyway);
    S(attend_optim_report);
    F(attend_optim_report, grad_norm), F(attend_optim_report, lr), F(attend_optim_report, clipped);
    S(attend_tf_stats);
    F(attend_tf_stats, loss), F(attend_tf_stats, tokens), F(attend_tf_stats, correct_tokens), F(attend_tf_stats, seqs);
    F(attend_tf_stats, correct_seqs), F(attend_tf_stats, attn_entropy);
    S(attend_step_report);
    F(attend_step_report, step), F(attend_step_report, epoch), F(attend_step_report, tf), F(attend_step_report, opt);
    F(attend_step_report, skipped);
    S(attend_eval_stats);
    F(attend_eval_stats, pairs), F(attend_eval_stats, loss), F(attend_eval_stats, tf_token_acc);
    F(attend_eval_stats, tf_seq_acc), F(attend_eval_stats, greedy_token_acc), F(attend_eval_stats, greedy_seq_acc);
    F(attend_eval_stats, attn_entropy);
    S(attend_task_config);
    F(attend_task_config, task), F(attend_task_config, symbols), F(attend_task_config, min_len);
    F(attend_task_config, max_len), F(attend_task_config, count), F(attend_task_config, seed);
    S(attend_tsv_options);
    F(attend_tsv_options, tokenizer), F(attend_tsv_options, max_line_bytes), F(attend_tsv_options, max_tokens);
    F(attend_tsv_options, skip_malformed), F(attend_tsv_options, copy);
    S(attend_intervention);
    F(attend_intervention, kind), F(attend_intervention, position), F(attend_intervention, token);
    F(attend_intervention, seed), F(attend_intervention, site), F(attend_intervention, layer);
    F(attend_intervention, head);
    S(attend_intervention_result);
    F(attend_intervention_result, tv), F(attend_intervention_result, kl), F(attend_intervention_result, js);
    F(attend_intervention_result, forced_align), F(attend_intervention_result, out);
    F(attend_intervention_result, out_align), F(attend_intervention_result, steps);
    F(attend_intervention_result, src_len), F(attend_intervention_result, tv_mean);
    F(attend_intervention_result, tv_max), F(attend_intervention_result, kl_mean);
    F(attend_intervention_result, kl_max), F(attend_intervention_result, js_mean);
    F(attend_intervention_result, js_max), F(attend_intervention_result, out_len);
    F(attend_intervention_result, changed);
    S(attend_plot_series);
    F(attend_plot_series, label), F(attend_plot_series, n), F(attend_plot_series, x), F(attend_plot_series, y);
    S(attend_g2p_options);
    F(attend_g2p_options, keep_stress), F(attend_g2p_options, skip_malformed);
    S(attend_g2p_lexicon_info);
    F(attend_g2p_lexicon_info, words), F(attend_g2p_lexicon_info, entries), F(attend_g2p_lexicon_info, phonemes);
    F(attend_g2p_lexicon_info, stress), F(attend_g2p_lexicon_info, bytes), F(attend_g2p_lexicon_info, source_size);
    F(attend_g2p_lexicon_info, source_mtime_ns);
    return 0;
}
