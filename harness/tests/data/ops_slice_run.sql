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
INSERT INTO runs VALUES('20261130-070512-be0f','ops','complete','2026-11-30T07:05:12.485Z','2026-11-30T07:05:15.724Z',NULL,0,'fixture-host','2.13.0+cpu','torch_neuronsim','0.1.0','0.1.0','neuron',NULL,'neuron-conform run (check-model fixture)','{"native_ops":["aten::_log_softmax","aten::_log_softmax.out","aten::_log_softmax_backward_data","aten::_log_softmax_backward_data.out","aten::_softmax","aten::_softmax.out","aten::_softmax_backward_data","aten::_softmax_backward_data.out","aten::abs","aten::abs.out","aten::abs_","aten::add.Scalar","aten::add.Scalar_out","aten::add.Tensor","aten::add.out","aten::add_.Scalar","aten::add_.Tensor","aten::addbmm","aten::addbmm.out","aten::addbmm_","aten::addcdiv","aten::addcdiv.out","aten::addcdiv_","aten::addcmul","aten::addcmul.out","aten::addcmul_","aten::addmm","aten::addmm.out","aten::addmm_","aten::addmv","aten::addmv.out","aten::addmv_","aten::all","aten::all.all_out","aten::all.dim","aten::all.dims","aten::all.dims_out","aten::all.out","aten::amax","aten::amax.out","aten::amin","aten::amin.out","aten::any","aten::any.all_out","aten::any.dim","aten::any.dims","aten::any.dims_out","aten::any.out","aten::arange.out","aten::arange.start_out","aten::argmax","aten::argmax.out","aten::argmin","aten::argmin.out","aten::baddbmm","aten::baddbmm.out","aten::baddbmm_","aten::bernoulli","aten::bernoulli.Tensor","aten::bernoulli.Tensor_out","aten::bernoulli.float_out","aten::bernoulli.out","aten::bernoulli_.Tensor","aten::bernoulli_.float","aten::bitwise_and.Scalar","aten::bitwise_and.Scalar_Tensor","aten::bitwise_and.Scalar_Tensor_out","aten::bitwise_and.Scalar_out","aten::bitwise_and.Tensor","aten::bitwise_and.Tensor_out","aten::bitwise_and_.Scalar","aten::bitwise_and_.Tensor","aten::bitwise_not","aten::bitwise_not.out","aten::bitwise_not_","aten::bitwise_or.Scalar","aten::bitwise_or.Scalar_Tensor","aten::bitwise_or.Scalar_Tensor_out","aten::bitwise_or.Scalar_out","aten::bitwise_or.Tensor","aten::bitwise_or.Tensor_out","aten::bitwise_or_.Scalar","aten::bitwise_or_.Tensor","aten::bitwise_xor.Scalar","aten::bitwise_xor.Scalar_Tensor","aten::bitwise_xor.Scalar_Tensor_out","aten::bitwise_xor.Scalar_out","aten::bitwise_xor.Tensor","aten::bitwise_xor.Tensor_out","aten::bitwise_xor_.Scalar","aten::bitwise_xor_.Tensor","aten::bmm","aten::bmm.out","aten::cat","aten::cat.out","aten::ceil","aten::ceil.out","aten::ceil_","aten::clamp","aten::clamp.Tensor","aten::clamp.Tensor_out","aten::clamp.out","aten::clamp_","aten::clamp_.Tensor","aten::clamp_max","aten::clamp_max.Tensor","aten::clamp_max.Tensor_out","aten::clamp_max.out","aten::clamp_max_","aten::clamp_max_.Tensor","aten::clamp_min","aten::clamp_min.Tensor","aten::clamp_min.Tensor_out","aten::clamp_min.out","aten::clamp_min_","aten::clamp_min_.Tensor","aten::cos","aten::cos.out","aten::cos_","aten::cumprod","aten::cumprod.out","aten::cumprod_","aten::cumsum","aten::cumsum.out","aten::cumsum_","aten::div.Scalar","aten::div.Scalar_mode","aten::div.Scalar_mode_out","aten::div.Scalar_out","aten::div.Tensor","aten::div.Tensor_mode","aten::div.out","aten::div.out_mode","aten::div_.Scalar","aten::div_.Scalar_mode","aten::div_.Tensor","aten::div_.Tensor_mode","aten::dot","aten::dot.out","aten::elu","aten::elu.out","aten::elu_","aten::elu_backward","aten::elu_backward.grad_input","aten::embedding","aten::embedding.out","aten::embedding_dense_backward","aten::embedding_dense_backward.out","aten::eq.Scalar","aten::eq.Scalar_out","aten::eq.Tensor","aten::eq.Tensor_out","aten::eq_.Scalar","aten::eq_.Tensor","aten::erf","aten::erf.out","aten::erf_","aten::exp","aten::exp.out","aten::exp2","aten::exp2.out","aten::exp2_","aten::exp_","aten::expm1","aten::expm1.out","aten::expm1_","aten::exponential","aten::exponential.out","aten::exponential_","aten::fill.Scalar","aten::fill.Scalar_out","aten::fill.Tensor","aten::fill.Tensor_out","aten::fill_.Scalar","aten::fill_.Tensor","aten::flip","aten::flip.out","aten::floor","aten::floor.out","aten::floor_","aten::fmod.Scalar","aten::fmod.Scalar_out","aten::fmod.Tensor","aten::fmod.Tensor_out","aten::fmod_.Scalar","aten::fmod_.Tensor","aten::frac","aten::frac.out","aten::frac_","aten::gather","aten::gather.out","aten::ge.Scalar","aten::ge.Scalar_out","aten::ge.Tensor","aten::ge.Tensor_out","aten::ge_.Scalar","aten::ge_.Tensor","aten::gelu","aten::gelu.out","aten::gelu_","aten::gelu_backward","aten::gelu_backward.grad_input","aten::gt.Scalar","aten::gt.Scalar_out","aten::gt.Tensor","aten::gt.Tensor_out","aten::gt_.Scalar","aten::gt_.Tensor","aten::hardtanh","aten::hardtanh.out","aten::hardtanh_","aten::hardtanh_backward","aten::hardtanh_backward.grad_input","aten::index.Tensor","aten::index.Tensor_out","aten::index_add","aten::index_add.out","aten::index_add_","aten::index_copy","aten::index_copy.out","aten::index_copy_","aten::index_put_","aten::index_select","aten::index_select.out","aten::isinf","aten::isinf.out","aten::isnan","aten::isnan.out","aten::isneginf","aten::isneginf.out","aten::isposinf","aten::isposinf.out","aten::le.Scalar","aten::le.Scalar_out","aten::le.Tensor","aten::le.Tensor_out","aten::le_.Scalar","aten::le_.Tensor","aten::leaky_relu","aten::leaky_relu.out","aten::leaky_relu_","aten::leaky_relu_backward","aten::leaky_relu_backward.grad_input","aten::lerp.Scalar","aten::lerp.Scalar_out","aten::lerp.Tensor","aten::lerp.Tensor_out","aten::lerp_.Scalar","aten::lerp_.Tensor","aten::linalg_vector_norm","aten::linalg_vector_norm.out","aten::linspace.Scalar_Tensor","aten::linspace.Scalar_Tensor_out","aten::linspace.Tensor_Scalar","aten::linspace.Tensor_Scalar_out","aten::linspace.Tensor_Tensor","aten::linspace.Tensor_Tensor_out","aten::linspace.out","aten::log","aten::log.out","aten::log10","aten::log10.out","aten::log10_","aten::log1p","aten::log1p.out","aten::log1p_","aten::log2","aten::log2.out","aten::log2_","aten::log_","aten::logical_and","aten::logical_and.out","aten::logical_and_","aten::logical_not","aten::logical_not.out","aten::logical_not_","aten::logical_or","aten::logical_or.out","aten::logical_or_","aten::logical_xor","aten::logical_xor.out","aten::logical_xor_","aten::logsumexp","aten::lt.Scalar","aten::lt.Scalar_out","aten::lt.Tensor","aten::lt.Tensor_out","aten::lt_.Scalar","aten::lt_.Tensor","aten::masked_fill.Scalar","aten::masked_fill.Scalar_out","aten::masked_fill.Tensor","aten::masked_fill.Tensor_out","aten::masked_fill_.Scalar","aten::masked_fill_.Tensor","aten::max","aten::max.dim","aten::max.dim_max","aten::max.unary_out","aten::maximum","aten::maximum.out","aten::mean","aten::mean.dim","aten::mean.dtype_out","aten::mean.out","aten::min","aten::min.dim","aten::min.dim_min","aten::min.unary_out","aten::minimum","aten::minimum.out","aten::mish","aten::mish.out","aten::mish_","aten::mm","aten::mm.out","aten::mse_loss","aten::mse_loss.out","aten::mse_loss_backward","aten::mse_loss_backward.grad_input","aten::mul.Scalar","aten::mul.Scalar_out","aten::mul.Tensor","aten::mul.out","aten::mul_.Scalar","aten::mul_.Tensor","aten::mv","aten::mv.out","aten::native_dropout","aten::native_dropout_backward","aten::native_dropout_backward.out","aten::native_layer_norm","aten::native_layer_norm.out","aten::native_layer_norm_backward","aten::native_layer_norm_backward.out","aten::ne.Scalar","aten::ne.Scalar_out","aten::ne.Tensor","aten::ne.Tensor_out","aten::ne_.Scalar","aten::ne_.Tensor","aten::neg","aten::neg.out","aten::neg_","aten::nll_loss2d_backward","aten::nll_loss2d_backward.grad_input","aten::nll_loss2d_forward","aten::nll_loss2d_forward.output","aten::nll_loss_backward","aten::nll_loss_backward.grad_input","aten::nll_loss_forward","aten::nll_loss_forward.output","aten::norm.Scalar","aten::norm.ScalarOpt_dim","aten::norm.ScalarOpt_dim_dtype","aten::norm.ScalarOpt_dtype","aten::norm.ScalarOpt_dtype_out","aten::norm.Scalar_out","aten::norm.dtype_out","aten::norm.out","aten::normal.Tensor_Tensor","aten::normal.Tensor_Tensor_out","aten::normal.Tensor_float","aten::normal.Tensor_float_out","aten::normal.float_Tensor","aten::normal.float_Tensor_out","aten::normal.float_float_out","aten::normal.out","aten::normal_","aten::pow.Scalar","aten::pow.Scalar_out","aten::pow.Tensor_Scalar","aten::pow.Tensor_Scalar_out","aten::pow.Tensor_Tensor","aten::pow.Tensor_Tensor_out","aten::pow_.Scalar","aten::pow_.Tensor","aten::prod","aten::prod.dim_int","aten::prod.int_out","aten::prod.out","aten::random","aten::random.from","aten::random.from_out","aten::random.out","aten::random.to","aten::random.to_out","aten::random_","aten::random_.from","aten::random_.to","aten::reciprocal","aten::reciprocal.out","aten::reciprocal_","aten::relu","aten::relu.out","aten::relu_","aten::remainder.Scalar","aten::remainder.Scalar_Tensor","aten::remainder.Scalar_Tensor_out","aten::remainder.Scalar_out","aten::remainder.Tensor","aten::remainder.Tensor_out","aten::remainder_.Scalar","aten::remainder_.Tensor","aten::roll","aten::roll.out","aten::round","aten::round.decimals","aten::round.decimals_out","aten::round.out","aten::round_","aten::round_.decimals","aten::rsqrt","aten::rsqrt.out","aten::rsqrt_","aten::rsub.Scalar","aten::rsub.Scalar_out","aten::rsub.Tensor","aten::rsub.Tensor_out","aten::scatter.reduce","aten::scatter.reduce_out","aten::scatter.src","aten::scatter.src_out","aten::scatter.value","aten::scatter.value_out","aten::scatter.value_reduce","aten::scatter.value_reduce_out","aten::scatter_.reduce","aten::scatter_.src","aten::scatter_.value","aten::scatter_.value_reduce","aten::scatter_add","aten::scatter_add.out","aten::scatter_add_","aten::select_scatter.out","aten::sigmoid","aten::sigmoid.out","aten::sigmoid_","aten::sigmoid_backward","aten::sigmoid_backward.grad_input","aten::sign","aten::sign.out","aten::sign_","aten::silu","aten::silu.out","aten::silu_","aten::silu_backward.grad_input","aten::sin","aten::sin.out","aten::sin_","aten::slice_scatter.out","aten::softplus","aten::softplus.out","aten::softplus_backward","aten::softplus_backward.grad_input","aten::sqrt","aten::sqrt.out","aten::sqrt_","aten::stack","aten::stack.out","aten::std.correction","aten::std.correction_out","aten::std_mean.correction","aten::std_mean.correction_out","aten::sub.Scalar","aten::sub.Scalar_out","aten::sub.Tensor","aten::sub.out","aten::sub_.Scalar","aten::sub_.Tensor","aten::sum","aten::sum.IntList_out","aten::sum.dim_IntList","aten::sum.out","aten::tanh","aten::tanh.out","aten::tanh_","aten::tanh_backward","aten::tanh_backward.grad_input","aten::threshold_backward","aten::threshold_backward.grad_input","aten::tril","aten::tril.out","aten::tril_","aten::triu","aten::triu.out","aten::triu_","aten::trunc","aten::trunc.out","aten::trunc_","aten::uniform","aten::uniform.out","aten::uniform_","aten::var.correction","aten::var.correction_out","aten::var_mean.correction","aten::var_mean.correction_out","aten::where.self","aten::where.self_out","aten::zero","aten::zero.out","aten::zero_"],"tracking":true}');
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
INSERT INTO cases VALUES('ops/isin/float32/forward','ops','isin','float32','forward');
INSERT INTO cases VALUES('ops/isin/int64/forward','ops','isin','int64','forward');
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
INSERT INTO cases VALUES('ops/lgamma/bool/forward','ops','lgamma','bool','forward');
INSERT INTO cases VALUES('ops/lgamma/float32/forward','ops','lgamma','float32','forward');
INSERT INTO cases VALUES('ops/lgamma/int64/forward','ops','lgamma','int64','forward');
CREATE TABLE planned (
  run_id TEXT NOT NULL REFERENCES runs(id),
  case_id TEXT NOT NULL REFERENCES cases(id),
  position INTEGER NOT NULL,
  PRIMARY KEY (run_id, case_id)
);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/abs/complex64/forward',0);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/abs/float32/forward',1);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/abs/int64/forward',2);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/add/bool/forward',3);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/add/complex64/forward',4);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/add/float32/forward',5);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/add/int64/forward',6);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/addmm/complex64/forward',7);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/addmm/float32/forward',8);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/addmm/int64/forward',9);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/complex/float32/forward',10);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/erfinv/bool/forward',11);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/erfinv/float32/forward',12);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/erfinv/int64/forward',13);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/expand/bool/forward',14);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/expand/complex64/forward',15);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/expand/float32/forward',16);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/expand/int64/forward',17);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/lgamma/bool/forward',18);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/lgamma/float32/forward',19);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/lgamma/int64/forward',20);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/mm/complex64/forward',21);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/mm/float32/forward',22);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/mm/int64/forward',23);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/mul/bool/forward',24);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/mul/complex64/forward',25);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/mul/float32/forward',26);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/mul/int64/forward',27);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/nn.functional.linear/complex64/forward',28);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/nn.functional.linear/float32/forward',29);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/nn.functional.linear/int64/forward',30);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/nn.functional.relu/float32/forward',31);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/nn.functional.relu/int64/forward',32);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/softmax/float32/forward',33);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/t/bool/forward',34);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/t/complex64/forward',35);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/t/float32/forward',36);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/t/int64/forward',37);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/view/bool/forward',38);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/view/complex64/forward',39);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/view/float32/forward',40);
INSERT INTO planned VALUES('20261130-070512-be0f','ops/view/int64/forward',41);
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
INSERT INTO results VALUES('20261130-070512-be0f','ops/erfinv/float32/forward','skip',0.0,'{"skiplist":{"category":"unsupported_op","entry":"skiplists/planted.json:1:14","mode":"skip","reason":"planted: erfinv is not on the device"}}','2026-11-30T07:05:12.488Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/abs/complex64/forward','error',0.017179712000142899341,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"exception_type":"NotImplementedError","message":"aten::abs: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).","rtol":1.3e-06,"sample":"(complex64[20, 20])","sample_index":0,"tolerance_source":"torch.testing default","unsupported":true}','2026-11-30T07:05:14.640Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/nn.functional.linear/float32/forward','pass',0.016737088999434490688,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":18},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"samples_compared":18,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.657Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/nn.functional.linear/int64/forward','pass',0.013775374000033480115,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":18},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":18,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.671Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/add/float32/forward','pass',0.011294068999632145278,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":11},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"samples_compared":11,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.683Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/add/bool/forward','pass',0.0090033819997188402339,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":11},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":11,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.692Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/add/int64/forward','pass',0.0090286800004832912236,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":11},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":11,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.702Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/mul/int64/forward','pass',0.0076415280000219354405,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":9},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":9,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.709Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/t/float32/forward','pass',0.0039484249991801334545,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"samples_compared":3,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.714Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/mul/float32/forward','pass',0.0079248930014728102833,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":9},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"samples_compared":9,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.722Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/mul/bool/forward','pass',0.0079205170004570391029,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":9},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":9,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.730Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/view/complex64/forward','pass',0.0063220780011761235073,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"samples_compared":7,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.737Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/t/bool/forward','pass',0.0038204840002435958012,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":3,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.741Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/expand/complex64/forward','pass',0.0074291599994467105716,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"samples_compared":9,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.749Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/expand/float32/forward','pass',0.0071045020013116300106,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"samples_compared":9,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.756Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/abs/float32/forward','pass',0.018240745001094182953,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":1},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"samples_compared":1,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.757Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/expand/int64/forward','pass',0.0068332450009620515629,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":9,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.763Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/expand/bool/forward','pass',0.0080882390011538518592,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":9,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.766Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/nn.functional.relu/float32/forward','pass',0.004659573000026284717,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":4},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"samples_compared":4,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.768Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/mm/int64/forward','pass',0.0037995020011294400319,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":3},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":3,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.780Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/softmax/float32/forward','pass',0.013576880000982782803,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":7},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"samples_compared":7,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.780Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/addmm/float32/forward','pass',0.01056808999965141993,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":6},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"samples_compared":6,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.790Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/view/float32/forward','pass',0.015356116000475594773,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"samples_compared":7,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.800Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/view/bool/forward','pass',0.0098623009998846100643,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":7,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.802Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/mul/complex64/forward','error',0.004482386999370646663,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"exception_type":"NotImplementedError","message":"aten::mul.Tensor: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).","rtol":1.3e-06,"sample":"(complex64[], complex64[])","sample_index":0,"tolerance_source":"torch.testing default","unsupported":true}','2026-11-30T07:05:14.807Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/view/int64/forward','pass',0.0085720039987791096791,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":7,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.809Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/abs/int64/forward','pass',0.003403877999517135322,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":1},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":1,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.813Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/nn.functional.linear/complex64/forward','error',0.0059441710000101011246,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"exception_type":"NotImplementedError","message":"aten::addmm: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).","rtol":1.3e-06,"sample":"(complex64[3], complex64[4, 3], complex64[4])","sample_index":0,"tolerance_source":"torch.testing default","unsupported":true}','2026-11-30T07:05:14.813Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/nn.functional.relu/int64/forward','pass',0.0046886259988241363316,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":4},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":4,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.817Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/add/complex64/forward','error',0.0045912200002931058406,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"exception_type":"NotImplementedError","message":"aten::add.Tensor: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).","rtol":1.3e-06,"sample":"(complex64[], complex64[])","sample_index":0,"tolerance_source":"torch.testing default","unsupported":true}','2026-11-30T07:05:14.818Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/addmm/complex64/forward','error',0.0035730920008063549175,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"exception_type":"NotImplementedError","message":"aten::addmm: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).","rtol":1.3e-06,"sample":"(complex64[2, 3], complex64[2, 2], complex64[2, 3], alpha=(2+3j), beta=(1+2j))","sample_index":0,"tolerance_source":"torch.testing default","unsupported":true}','2026-11-30T07:05:14.822Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/addmm/int64/forward','pass',0.0047541250005451729521,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":4},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":4,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.822Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/complex/float32/forward','error',0.0041495779987599235028,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"exception_type":"NotImplementedError","message":"aten::complex.out: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).","rtol":1.3e-06,"sample":"(float32[], float32[])","sample_index":0,"tolerance_source":"torch.testing default","unsupported":true}','2026-11-30T07:05:14.826Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/t/complex64/forward','pass',0.0042902179993689060211,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"samples_compared":3,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.827Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/mm/float32/forward','pass',0.0040684260002308292314,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":3},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"samples_compared":3,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.830Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/t/int64/forward','pass',0.0037966079999023349955,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":3,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.831Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/mm/complex64/forward','error',0.0032775189993117237463,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"exception_type":"NotImplementedError","message":"aten::mm: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).","rtol":1.3e-06,"sample":"(complex64[5, 10], complex64[10, 5])","sample_index":0,"tolerance_source":"torch.testing default","unsupported":true}','2026-11-30T07:05:14.834Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/erfinv/bool/forward','fallback',0.0028732819992001168429,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":1,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.834Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/erfinv/int64/forward','fallback',0.0027600119992712279781,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":1,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.837Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/lgamma/bool/forward','fallback',0.0036870730000373441725,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":3,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.838Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/lgamma/float32/forward','fallback',0.0037301880001905374228,'{"atol":1e-05,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":1.3e-06,"samples_compared":3,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.841Z');
INSERT INTO results VALUES('20261130-070512-be0f','ops/lgamma/int64/forward','fallback',0.0035872639982699183747,'{"atol":0.0,"compile_cache":{"compiles":0,"hits":0},"max_abs_error":0.0,"max_rel_error":0.0,"rtol":0.0,"samples_compared":3,"samples_without_reference":0,"tolerance_source":"torch.testing default"}','2026-11-30T07:05:14.842Z');
CREATE TABLE op_events (
  run_id TEXT NOT NULL,
  case_id TEXT NOT NULL,
  op TEXT NOT NULL,
  route TEXT NOT NULL CHECK (route IN ('native', 'fallback')),
  calls INTEGER NOT NULL,
  PRIMARY KEY (run_id, case_id, op, route),
  FOREIGN KEY (run_id, case_id) REFERENCES results(run_id, case_id)
);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/nn.functional.linear/float32/forward','aten::addmm','native',9);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/nn.functional.linear/float32/forward','aten::mm','native',9);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/nn.functional.linear/int64/forward','aten::addmm','native',9);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/nn.functional.linear/int64/forward','aten::mm','native',9);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/add/float32/forward','aten::add.Tensor','native',11);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/add/bool/forward','aten::add.Tensor','native',11);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/add/int64/forward','aten::add.Tensor','native',11);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/mul/int64/forward','aten::mul.Tensor','native',9);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/mul/float32/forward','aten::mul.Tensor','native',9);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/mul/bool/forward','aten::mul.Tensor','native',9);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/abs/float32/forward','aten::abs','native',1);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/nn.functional.relu/float32/forward','aten::relu','native',4);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/mm/int64/forward','aten::mm','native',3);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/softmax/float32/forward','aten::_softmax','native',7);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/addmm/float32/forward','aten::addmm','native',6);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/abs/int64/forward','aten::abs','native',1);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/nn.functional.relu/int64/forward','aten::relu','native',4);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/addmm/int64/forward','aten::addmm','native',4);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/mm/float32/forward','aten::mm','native',3);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/erfinv/bool/forward','aten::erfinv.out','fallback',1);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/erfinv/int64/forward','aten::erfinv.out','fallback',1);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/lgamma/bool/forward','aten::lgamma.out','fallback',3);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/lgamma/float32/forward','aten::lgamma.out','fallback',3);
INSERT INTO op_events VALUES('20261130-070512-be0f','ops/lgamma/int64/forward','aten::lgamma.out','fallback',3);
CREATE TABLE run_digests (
  run_id TEXT PRIMARY KEY REFERENCES runs(id),
  recorded INTEGER NOT NULL,
  digest TEXT NOT NULL
);
CREATE INDEX results_by_case ON results(case_id);
COMMIT;
