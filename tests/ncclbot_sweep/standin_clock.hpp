#pragma once
// The stand-in GPU's clock (us): the stand-in NCCL advances it by each call's modelled time and the
// stand-in CUDA events read it, so event timing measures exactly the model.
namespace ncclbot::sweep_standin {

double& clock_us();

}  // namespace ncclbot::sweep_standin
