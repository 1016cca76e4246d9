// The suites in this folder run as ranks of one mpiexec job: this global fixture joins the job
// before the first case and leaves it after the last, as a training program does.
#pragma once

#include <boost/test/unit_test.hpp>

#include "distributed/distributed.hpp"

struct ProcessGroupFixture {
  ProcessGroupFixture() { minigrad::distributed::init_process_group(); }
  ~ProcessGroupFixture() { minigrad::distributed::destroy_process_group(); }
};
