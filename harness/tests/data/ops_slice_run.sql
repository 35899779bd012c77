PRAGMA foreign_keys=OFF;
PRAGMA user_version = 2;
BEGIN TRANSACTION;
CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  suite TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted')),
  started_at TEXT NOT NULL,
  ended_at TEXT,
  label TEXT,
  seed INTEGER NOT NULL,
  host TEXT NOT NULL,
  torch_version TEXT NOT NULL,
  backend_module TEXT NOT NULL,
  backend_version TEXT NOT NULL,
  harness_version TEXT NOT NULL,
  device TEXT NOT NULL,
  shard TEXT,
  command TEXT NOT NULL
, backend_info TEXT NOT NULL DEFAULT '{}');
INSERT INTO runs VALUES('20261130-074104-c54e','ops','complete','2026-11-30T07:41:04.161Z','2026-11-30T07:41:07.702Z',NULL,0,'fixture-host','2.13.0+cpu','torch_neuronsim','0.1.0','0.1.0','neuron',NULL,'neuron-conform run (check-model fixture)','{"native_ops":["aten::_log_softmax","aten::_log_softmax.out","aten::_log_softmax_backward_data","aten::_log_softmax_backward_data.out","aten::_softmax","aten::_softmax.out","aten::_softmax_backward_data","aten::_softmax_backward_data.out","aten::abs","aten::abs.out","aten::abs_","aten::add.Scalar","aten::add.Scalar_out","aten::add.Tensor","aten::add.out","aten::add_.Scalar","aten::add_.Tensor","aten::addbmm","aten::addbmm.out","aten::addbmm_","aten::addcdiv","aten::addcdiv.out","aten::addcdiv_","aten::addcmul","aten::addcmul.out","aten::addcmul_","aten::addmm","aten::addmm.out","aten::addmm_","aten::addmv","aten::addmv.out","aten::addmv_","aten::all","aten::all.all_out","aten::all.dim","aten::all.dims","aten::all.dims_out","aten::all.out","aten::amax","aten::amax.out","aten::amin","aten::amin.out","aten::any","aten::any.all_out","aten::any.dim","aten::any.dims","aten::any.dims_out","aten::any.out","aten::arange.out","aten::arange.start_out","aten::argmax","aten::argmax.out","aten::argmin","aten::argmin.out","aten::baddbmm","aten::baddbmm.out","aten::baddbmm_","aten::bernoulli","aten::bernoulli.Tensor","aten::bernoulli.Tensor_out","aten::bernoulli.float_out","aten::bernoulli.out","aten::bernoulli_.Tensor","aten::bernoulli_.float","aten::bitwise_and.Scalar","aten::bitwise_and.Scalar_Tensor","aten::bitwise_and.Scalar_Tensor_out","aten::bitwise_and.Scalar_out","aten::bitwise_and.Tensor","aten::bitwise_and.Tensor_out","aten::bitwise_and_.Scalar","aten::bitwise_and_.Tensor","aten::bitwise_not","aten::bitwise_not.out","aten::bitwise_not_","aten::bitwise_or.Scalar","aten::bitwise_or.Scalar_Tensor","aten::bitwise_or.Scalar_Tensor_out","aten::bitwise_or.Scalar_out","aten::bitwise_or.Tensor","aten::bitwise_or.Tensor_out","aten::bitwise_or_.Scalar","aten::bitwise_or_.Tensor","aten::bitwise_xor.Scalar","aten::bitwise_xor.Scalar_Tensor","aten::bitwise_xor.Scalar_Tensor_out","aten::bitwise_xor.Scalar_out","aten::bitwise_xor.Tensor","aten::bitwise_xor.Tensor_out","aten::bitwise_xor_.Scalar","aten::bitwise_xor_.Tensor","aten::bmm","aten::bmm.out","aten::cat","aten::cat.out","aten::ceil","aten::ceil.out","aten::ceil_","aten::clamp","aten::clamp.Tensor","aten::clamp.Tensor_out","aten::clamp.out","aten::clamp_","aten::clamp_.Tensor","aten::clamp_max","aten::clamp_max.Tensor","aten::clamp_max.Tensor_out","aten::clamp_max.out","aten::clamp_max_","aten::clamp_max_.Tensor","aten::clamp_min","aten::clamp_min.Tensor","aten::clamp_min.Tensor_out","aten::clamp_min.out","aten::clamp_min_","aten::clamp_min_.Tensor","aten::cos","aten::cos.out","aten::cos_","aten::cumprod","aten::cumprod.out","aten::cumprod_","aten::cumsum","aten::cumsum.out","aten::cumsum_","aten::div.Scalar","aten::div.Scalar_mode","aten::div.Scalar_mode_out","aten::div.Scalar_out","aten::div.Tensor","aten::div.Tensor_mode","aten::div.out","aten::div.out_mode","aten::div_.Scalar","aten::div_.Scalar_mode","aten::div_.Tensor","aten::div_.Tensor_mode","aten::dot","aten::dot.out","aten::elu","aten::elu.out","aten::elu_","aten::elu_backward","aten::elu_backward.grad_input","aten::embedding","aten::embedding.out","aten::embedding_dense_backward","aten::embedding_dense_backward.out","aten::eq.Scalar","aten::eq.Scalar_out","aten::eq.Tensor","aten::eq.Tensor_out","aten::eq_.Scalar","aten::eq_.Tensor","aten::erf","aten::erf.out","aten::erf_","aten::exp","aten::exp.out","aten::exp2","aten::exp2.out","aten::exp2_","aten::exp_","aten::expm1","aten::expm1.out","aten::expm1_","aten::exponential","aten::exponential.out","aten::exponential_","aten::fill.Scalar","aten::fill.Scalar_out","aten::fill.Tensor","aten::fill.Tensor_out","aten::fill_.Scalar","aten::fill_.Tensor","aten::flip","aten::flip.out","aten::floor","aten::floor.out","aten::floor_","aten::fmod.Scalar","aten::fmod.Scalar_out","aten::fmod.Tensor","aten::fmod.Tensor_out","aten::fmod_.Scalar","aten::fmod_.Tensor","aten::frac","aten::frac.out","aten::frac_","aten::gather","aten::gather.out","aten::ge.Scalar","aten::ge.Scalar_out","aten::ge.Tensor","aten::ge.Tensor_out","aten::ge_.Scalar","aten::ge_.Tensor","aten::gelu","aten::gelu.out","aten::gelu_","aten::gelu_backward","aten::gelu_backward.grad_input","aten::gt.Scalar","aten::gt.Scalar_out","aten::gt.Tensor","aten::gt.Tensor_out","aten::gt_.Scalar","aten::gt_.Tensor","aten::hardtanh","aten::hardtanh.out","aten::hardtanh_","aten::hardtanh_backward","aten::hardtanh_backward.grad_input","aten::index.Tensor","aten::index.Tensor_out","aten::index_add","aten::index_add.out","aten::index_add_","aten::index_copy","aten::index_copy.out","aten::index_copy_","aten::index_put_","aten::index_select","aten::index_select.out","aten::isinf","aten::isinf.out","aten::isnan","aten::isnan.out","aten::isneginf","aten::isneginf.out","aten::isposinf","aten::isposinf.out","aten::le.Scalar","aten::le.Scalar_out","aten::le.Tensor","aten::le.Tensor_out","aten::le_.Scalar","aten::le_.Tensor","aten::leaky_relu","aten::leaky_relu.out","aten::leaky_relu_","aten::leaky_relu_backward","aten::leaky_relu_backward.grad_input","aten::lerp.Scalar","aten::lerp.Scalar_out","aten::lerp.Tensor","aten::lerp.Tensor_out","aten::lerp_.Scalar","aten::lerp_.Tensor","aten::linalg_vector_norm","aten::linalg_vector_norm.out","aten::linspace.Scalar_Tensor","aten::linspace.Scalar_Tensor_out","aten::linspace.Tensor_Scalar","aten::linspace.Tensor_Scalar_out","aten::linspace.Tensor_Tensor","aten::linspace.Tensor_Tensor_out","aten::linspace.out","aten::log","aten::log.out","aten::log10","aten::log10.out","aten::log10_","aten::log1p","aten::log1p.out","aten::log1p_","aten::log2","aten::log2.out","aten::log2_","aten::log_","aten::logical_and","aten::logical_and.out","aten::logical_and_","aten::logical_not","aten::logical_not.out","aten::logical_not_","aten::logical_or","aten::logical_or.out","aten::logical_or_","aten::logical_xor","aten::logical_xor.out","aten::logical_xor_","aten::logsumexp","aten::lt.Scalar","aten::lt.Scalar_out","aten::lt.Tensor","aten::lt.Tensor_out","aten::lt_.Scalar","aten::lt_.Tensor","aten::masked_fill.Scalar","aten::masked_fill.Scalar_out","aten::masked_fill.Tensor","aten::masked_fill.Tensor_out","aten::masked_fill_.Scalar","aten::masked_fill_.Tensor","aten::max","aten::max.dim","aten::max.dim_max","aten::max.unary_out","aten::maximum","aten::maximum.out","aten::mean","aten::mean.dim","aten::mean.dtype_out","aten::mean.out","aten::min","aten::min.dim","aten::min.dim_min","aten::min.unary_out","aten::minimum","aten::minimum.out","aten::mish","aten::mish.out","aten::mish_","aten::mm","aten::mm.out","aten::mse_loss","aten::mse_loss.out","aten::mse_loss_backward","aten::mse_loss_backward.grad_input","aten::mul.Scalar","aten::mul.Scalar_out","aten::mul.Tensor","aten::mul.out","aten::mul_.Scalar","aten::mul_.Tensor","aten::mv","aten::mv.out","aten::native_dropout","aten::native_dropout_backward","aten::native_dropout_backward.out","aten::native_layer_norm","aten::native_layer_norm.out","aten::native_layer_norm_backward","aten::native_layer_norm_backward.out","aten::ne.Scalar","aten::ne.Scalar_out","aten::ne.Tensor","aten::ne.Tensor_out","aten::ne_.Scalar","aten::ne_.Tensor","aten::neg","aten::neg.out","aten::neg_","aten::nll_loss2d_backward","aten::nll_loss2d_backward.grad_input","aten::nll_loss2d_forward","aten::nll_loss2d_forward.output","aten::nll_loss_backward","aten::nll_loss_backward.grad_input","aten::nll_loss_forward","aten::nll_loss_forward.output","aten::norm.Scalar","aten::norm.ScalarOpt_dim","aten::norm.ScalarOpt_dim_dtype","aten::norm.ScalarOpt_dtype","aten::norm.ScalarOpt_dtype_out","aten::norm.Scalar_out","aten::norm.dtype_out","aten::norm.out","aten::normal.Tensor_Tensor","aten::normal.Tensor_Tensor_out","aten::normal.Tensor_float","aten::normal.Tensor_float_out","aten::normal.float_Tensor","aten::normal.float_Tensor_out","aten::normal.float_float_out","aten::normal.out","aten::normal_","aten::pow.Scalar","aten::pow.Scalar_out","aten::pow.Tensor_Scalar","aten::pow.Tensor_Scalar_out","aten::pow.Tensor_Tensor","aten::pow.Tensor_Tensor_out","aten::pow_.Scalar","aten::pow_.Tensor","aten::prod","aten::prod.dim_int","aten::prod.int_out","aten::prod.out","aten::random","aten::random.from","aten::random.from_out","aten::random.out","aten::random.to","aten::random.to_out","aten::random_","aten::random_.from","aten::random_.to","aten::reciprocal","aten::reciprocal.out","aten::reciprocal_","aten::relu","aten::relu.out","aten::relu_","aten::remainder.Scalar","aten::remainder.Scalar_Tensor","aten::remainder.Scalar_Tensor_out","aten::remainder.Scalar_out","aten::remainder.Tensor","aten::remainder.Tensor_out","aten::remainder_.Scalar","aten::remainder_.Tensor","aten::roll","aten::roll.out","aten::round","aten::round.decimals","aten::round.decimals_out","aten::round.out","aten::round_","aten::round_.decimals","aten::rsqrt","aten::rsqrt.out","aten::rsqrt_","aten::rsub.Scalar","aten::rsub.Scalar_out","aten::rsub.Tensor","aten::rsub.Tensor_out","aten::scatter.reduce","aten::scatter.reduce_out","aten::scatter.src","aten::scatter.src_out","aten::scatter.value","aten::scatter.value_out","aten::scatter.value_reduce","aten::scatter.value_reduce_out","aten::scatter_.reduce","aten::scatter_.src","aten::scatter_.value","aten::scatter_.value_reduce","aten::scatter_add","aten::scatter_add.out","aten::scatter_add_","aten::select_scatter.out","aten::sigmoid","aten::sigmoid.out","aten::sigmoid_","aten::sigmoid_backward","aten::sigmoid_backward.grad_input","aten::sign","aten::sign.out","aten::sign_","aten::silu","aten::silu.out","aten::silu_","aten::silu_backward.grad_input","aten::sin","aten::sin.out","aten::sin_","aten::slice_scatter.out","aten::softplus","aten::softplus.out","aten::softplus_backward","aten::softplus_backward.grad_input","aten::sqrt","aten::sqrt.out","aten::sqrt_","aten::stack","aten::stack.out","aten::std.correction","aten::std.correction_out","aten::std_mean.correction","aten::std_mean.correction_out","aten::sub.Scalar","aten::sub.Scalar_out","aten::sub.Tensor","aten::sub.out","aten::sub_.Scalar","aten::sub_.Tensor","aten::sum","aten::sum.IntList_out","aten::sum.dim_IntList","aten::sum.out","aten::tanh","aten::tanh.out","aten::tanh_","aten::tanh_backward","aten::tanh_backward.grad_input","aten::threshold_backward","aten::threshold_backward.grad_input","aten::tril","aten::tril.out","aten::tril_","aten::triu","aten::triu.out","aten::triu_","aten::trunc","aten::trunc.out","aten::trunc_","aten::uniform","aten::uniform.out","aten::uniform_","aten::var.correction","aten::var.correction_out","aten::var_mean.correction","aten::var_mean.correction_out","aten::where.self","aten::where.self_out","aten::zero","aten::zero.out","aten::zero_"],"tracking":true}');
CREATE TABLE cases (
  id TEXT PRIMARY KEY,
  suite TEXT NOT NULL,
  subject TEXT NOT NULL,
  dtype TEXT NOT NULL,
  check_name TEXT NOT NULL
);
INSERT INTO cases VALUES('ops/abs/complex64/forward','ops','abs','complex64','forward');
INSERT INTO cases VALUES('ops/abs/float32/forward','ops','abs','float32','forward');
INSERT INTO cases VALUES('ops/abs/int64/forward','ops','abs','int64','forward');
INSERT INTO cases VALUES('ops/add/bool/forward','ops','add','bool','forward');
INSERT INTO cases VALUES('ops/add/complex64/forward','ops','add','complex64','forward');
INSERT INTO cases VALUES('ops/add/float32/forward','ops','add','float32','forward');
INSERT INTO cases VALUES('ops/add/int64/forward','ops','add','int64','forward');
INSERT INTO cases VALUES('ops/addmm/complex64/forward','ops','addmm','complex64','forward');
INSERT INTO cases VALUES('ops/addmm/float32/forward','ops','addmm','float32','forward');
INSERT INTO cases VALUES('ops/addmm/int64/forward','ops','addmm','int64','forward');
INSERT INTO cases VALUES('ops/complex/float32/forward','ops','complex','float32','forward');
INSERT INTO cases VALUES('ops/erfinv/bool/forward','ops','erfinv','bool','forward');
INSERT INTO cases VALUES('ops/erfinv/float32/forward','ops','erfinv','float32','forward');
INSERT INTO cases VALUES('ops/erfinv/int64/forward','ops','erfinv','int64','forward');
INSERT INTO cases VALUES('ops/expand/bool/forward','ops','expand','bool','forward');
INSERT INTO cases VALUES('ops/expand/complex64/forward','ops','expand','complex64','forward');
INSERT INTO cases VALUES('ops/expand/float32/forward','ops','expand','float32','forward');
INSERT INTO cases VALUES('ops/expand/int64/forward','ops','expand','int64','forward');
INSERT INTO cases VALUES('ops/lgamma/bool/forward','ops','lgamma','bool','forward');
INSERT INTO cases VALUES('ops/lgamma/float32/forward','ops','lgamma','float32','forward');
INSERT INTO cases VALUES('ops/lgamma/int64/forward','ops','lgamma','int64','forward');
INSERT INTO cases VALUES('ops/mm/complex64/forward','ops','mm','complex64','forward');
INSERT INTO cases VALUES('ops/mm/float32/forward','ops','mm','float32','forward');
INSERT INTO cases VALUES('ops/mm/int64/forward','ops','mm','int64','forward');
INSERT INTO cases VALUES('ops/mul/bool/forward','ops','mul','bool','forward');
INSERT INTO cases VALUES('ops/mul/complex64/forward','ops','mul','complex64','forward');
INSERT INTO cases VALUES('ops/mul/float32/forward','ops','mul','float32','forward');
INSERT INTO cases VALUES('ops/mul/int64/forward','ops','mul','int64','forward');
INSERT INTO cases VALUES('ops/nn.functional.linear/complex64/forward','ops','nn.functional.linear','complex64','forward');
INSERT INTO cases VALUES('ops/nn.functional.linear/float32/forward','ops','nn.functional.linear','float32','forward');
INSERT INTO cases VALUES('ops/nn.functional.linear/int64/forward','ops','nn.functional.linear','int64','forward');
INSERT INTO cases VALUES('ops/nn.functional.relu/float32/forward','ops','nn.functional.relu','float32','forward');
INSERT INTO cases VALUES('ops/nn.functional.relu/int64/forward','ops','nn.functional.relu','int64','forward');
INSERT INTO cases VALUES('ops/softmax/float32/forward','ops','softmax','float32','forward');
INSERT INTO cases VALUES('ops/t/bool/forward','ops','t','bool','forward');
INSERT INTO cases VALUES('ops/t/complex64/forward','ops','t','complex64','forward');
INSERT INTO cases VALUES('ops/t/float32/forward','ops','t','float32','forward');
INSERT INTO cases VALUES('ops/t/int64/forward','ops','t','int64','forward');
INSERT INTO cases VALUES('ops/view/bool/forward','ops','view','bool','forward');
INSERT INTO cases VALUES('ops/view/complex64/forward','ops','view','complex64','forward');
INSERT INTO cases VALUES('ops/view/float32/forward','ops','view','float32','forward');
INSERT INTO cases VALUES('ops/view/int64/forward','ops','view','int64','forward');
CREATE TABLE planned (
  run_id TEXT NOT NULL REFERENCES runs(id),
  case_id TEXT NOT NULL REFERENCES cases(id),
  position INTEGER NOT NULL,
  PRIMARY KEY (run_id, case_id)
);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/abs/complex64/forward',0);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/abs/float32/forward',1);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/abs/int64/forward',2);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/add/bool/forward',3);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/add/complex64/forward',4);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/add/float32/forward',5);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/add/int64/forward',6);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/addmm/complex64/forward',7);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/addmm/float32/forward',8);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/addmm/int64/forward',9);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/complex/float32/forward',10);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/erfinv/bool/forward',11);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/erfinv/float32/forward',12);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/erfinv/int64/forward',13);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/expand/bool/forward',14);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/expand/complex64/forward',15);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/expand/float32/forward',16);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/expand/int64/forward',17);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/lgamma/bool/forward',18);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/lgamma/float32/forward',19);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/lgamma/int64/forward',20);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/mm/complex64/forward',21);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/mm/float32/forward',22);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/mm/int64/forward',23);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/mul/bool/forward',24);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/mul/complex64/forward',25);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/mul/float32/forward',26);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/mul/int64/forward',27);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/nn.functional.linear/complex64/forward',28);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/nn.functional.linear/float32/forward',29);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/nn.functional.linear/int64/forward',30);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/nn.functional.relu/float32/forward',31);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/nn.functional.relu/int64/forward',32);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/softmax/float32/forward',33);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/t/bool/forward',34);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/t/complex64/forward',35);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/t/float32/forward',36);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/t/int64/forward',37);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/view/bool/forward',38);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/view/complex64/forward',39);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/view/float32/forward',40);
INSERT INTO planned VALUES('20261130-074104-c54e','ops/view/int64/forward',41);
CREATE TABLE results (
  run_id TEXT NOT NULL REFERENCES runs(id),
  case_id TEXT NOT NULL REFERENCES cases(id),
  outcome TEXT NOT NULL CHECK (outcome IN
    ('pass', 'fallback', 'fail', 'error', 'crash', 'timeout', 'skip', 'xfail', 'xpass')),
  duration REAL NOT NULL,
  evidence TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (run_id, case_id)
);
INSERT INTO results VALUES('20261130-074104-c54e','ops/erfinv/float32/forward','skip',0.0,'{"skiplist":{"category":"unsupported_op","entry":"skiplists/planted.json:1:14","mode":"skip","reason":"planted: erfinv is not on the device"}}','2026-11-30T07:41:04.161Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/abs/complex64/forward','error',0.018963148999318946152,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"exception_type":"NotImplementedError","failing_op":"aten::abs","message":"aten::abs: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).","rtol":1.3e-06,"sample":"(complex64[20, 20])","sample_index":0,"tolerance_source":"torch.testing default","unsupported":true}','2026-11-30T07:41:06.462Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/abs/int64/forward','pass',0.006142849000752903521,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":1},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":1,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.472Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/abs/float32/forward','pass',0.019276269000329193659,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":1},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"inputs_compared":1,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.475Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/add/complex64/forward','error',0.0062026189989410340785,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"exception_type":"NotImplementedError","failing_op":"aten::add.Tensor","message":"aten::add.Tensor: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).","rtol":1.3e-06,"sample":"(complex64[], complex64[])","sample_index":0,"tolerance_source":"torch.testing default","unsupported":true}','2026-11-30T07:41:06.482Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/add/bool/forward','pass',0.010686588000680785626,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":11},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":11,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.483Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/add/float32/forward','pass',0.010273849000441259704,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":11},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"inputs_compared":11,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.492Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/add/int64/forward','pass',0.010103493001224705949,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":11},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":11,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.494Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/addmm/complex64/forward','error',0.0053711809996457304805,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"exception_type":"NotImplementedError","failing_op":"aten::addmm","message":"aten::addmm: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).","rtol":1.3e-06,"sample":"(complex64[2, 3], complex64[2, 2], complex64[2, 3], alpha=(2+3j), beta=(1+2j))","sample_index":0,"tolerance_source":"torch.testing default","unsupported":true}','2026-11-30T07:41:06.498Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/addmm/float32/forward','pass',0.0077045130001351935788,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":6},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"inputs_compared":6,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.502Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/addmm/int64/forward','pass',0.0055712310004309983924,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":4},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":4,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.504Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/complex/float32/forward','error',0.0050486869986343663185,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"exception_type":"NotImplementedError","failing_op":"aten::complex.out","message":"aten::complex.out: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).","rtol":1.3e-06,"sample":"(float32[], float32[])","sample_index":0,"tolerance_source":"torch.testing default","unsupported":true}','2026-11-30T07:41:06.507Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/erfinv/bool/forward','fallback',0.0034405930000502848997,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":1,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.508Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/erfinv/int64/forward','fallback',0.0032086950013763271272,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":1,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.511Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/expand/bool/forward','pass',0.0073829399989335797727,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":9,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.516Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/expand/complex64/forward','pass',0.0077888089999760268256,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"inputs_compared":9,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.519Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/expand/float32/forward','pass',0.0083448129989847075194,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"inputs_compared":9,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.524Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/expand/int64/forward','pass',0.0080125649983529001474,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":9,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.527Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/lgamma/bool/forward','fallback',0.0050328630004514707252,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":3,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.530Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/lgamma/float32/forward','fallback',0.0042955569988407660275,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"inputs_compared":3,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.532Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/lgamma/int64/forward','fallback',0.0040489660004823235794,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":3,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.534Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/mm/complex64/forward','error',0.0036141839991614688187,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"exception_type":"NotImplementedError","failing_op":"aten::mm","message":"aten::mm: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).","rtol":1.3e-06,"sample":"(complex64[5, 10], complex64[10, 5])","sample_index":0,"tolerance_source":"torch.testing default","unsupported":true}','2026-11-30T07:41:06.536Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/mm/float32/forward','pass',0.0045606240000779507681,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":3},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"inputs_compared":3,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.539Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/mm/int64/forward','pass',0.0043892669982596999034,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":3},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":3,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.540Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/mul/complex64/forward','error',0.0045071149997966131195,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"exception_type":"NotImplementedError","failing_op":"aten::mul.Tensor","message":"aten::mul.Tensor: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).","rtol":1.3e-06,"sample":"(complex64[], complex64[])","sample_index":0,"tolerance_source":"torch.testing default","unsupported":true}','2026-11-30T07:41:06.545Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/mul/bool/forward','pass',0.0080118540008697891607,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":9},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":9,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.547Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/mul/float32/forward','pass',0.0082860559996333904564,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":9},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"inputs_compared":9,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.554Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/mul/int64/forward','pass',0.0091531859998212894424,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":9},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":9,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.556Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/nn.functional.linear/complex64/forward','error',0.0065029190009227022528,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"exception_type":"NotImplementedError","failing_op":"aten::addmm","message":"aten::addmm: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).","rtol":1.3e-06,"sample":"(complex64[3], complex64[4, 3], complex64[4])","sample_index":0,"tolerance_source":"torch.testing default","unsupported":true}','2026-11-30T07:41:06.561Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/nn.functional.linear/float32/forward','pass',0.013931046998550300486,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":18},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"inputs_compared":18,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.571Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/nn.functional.linear/int64/forward','pass',0.013724006999837001785,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":18},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":18,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.575Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/nn.functional.relu/float32/forward','pass',0.0064222990004054736346,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":4},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"inputs_compared":4,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.577Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/nn.functional.relu/int64/forward','pass',0.0059937950009043561294,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":4},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":4,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.581Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/t/bool/forward','pass',0.0041201830008503748103,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":3,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.585Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/t/complex64/forward','pass',0.003962436998335761018,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"inputs_compared":3,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.589Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/t/float32/forward','pass',0.0038543640002899337559,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"inputs_compared":3,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.594Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/t/int64/forward','pass',0.0037082150010974146425,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":3,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.598Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/view/bool/forward','pass',0.0061448220003512687981,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":7,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.604Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/view/complex64/forward','pass',0.0063725540003360947594,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"inputs_compared":7,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.611Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/view/float32/forward','pass',0.0062234500001068226993,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"inputs_compared":7,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.620Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/view/int64/forward','pass',0.0063581419999536592513,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"inputs_compared":7,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.627Z');
INSERT INTO results VALUES('20261130-074104-c54e','ops/softmax/float32/forward','pass',0.072127847000956535339,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":7},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"inputs_compared":7,"inputs_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:41:06.650Z');
CREATE TABLE op_events (
  run_id TEXT NOT NULL,
  case_id TEXT NOT NULL,
  op TEXT NOT NULL,
  route TEXT NOT NULL CHECK (route IN ('native', 'fallback')),
  calls INTEGER NOT NULL,
  PRIMARY KEY (run_id, case_id, op, route),
  FOREIGN KEY (run_id, case_id) REFERENCES results(run_id, case_id)
);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/abs/int64/forward','aten::abs','native',1);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/abs/float32/forward','aten::abs','native',1);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/add/bool/forward','aten::add.Tensor','native',11);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/add/float32/forward','aten::add.Tensor','native',11);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/add/int64/forward','aten::add.Tensor','native',11);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/addmm/float32/forward','aten::addmm','native',6);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/addmm/int64/forward','aten::addmm','native',4);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/erfinv/bool/forward','aten::erfinv.out','fallback',1);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/erfinv/int64/forward','aten::erfinv.out','fallback',1);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/lgamma/bool/forward','aten::lgamma.out','fallback',3);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/lgamma/float32/forward','aten::lgamma.out','fallback',3);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/lgamma/int64/forward','aten::lgamma.out','fallback',3);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/mm/float32/forward','aten::mm','native',3);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/mm/int64/forward','aten::mm','native',3);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/mul/bool/forward','aten::mul.Tensor','native',9);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/mul/float32/forward','aten::mul.Tensor','native',9);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/mul/int64/forward','aten::mul.Tensor','native',9);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/nn.functional.linear/float32/forward','aten::addmm','native',9);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/nn.functional.linear/float32/forward','aten::mm','native',9);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/nn.functional.linear/int64/forward','aten::addmm','native',9);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/nn.functional.linear/int64/forward','aten::mm','native',9);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/nn.functional.relu/float32/forward','aten::relu','native',4);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/nn.functional.relu/int64/forward','aten::relu','native',4);
INSERT INTO op_events VALUES('20261130-074104-c54e','ops/softmax/float32/forward','aten::_softmax','native',7);
CREATE TABLE run_digests (
  run_id TEXT PRIMARY KEY REFERENCES runs(id),
  recorded INTEGER NOT NULL,
  digest TEXT NOT NULL
);
CREATE INDEX results_by_case ON results(case_id);
COMMIT;
