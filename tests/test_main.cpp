// The one main() every test executable shares: Boost.Test's runner, named after the project.
#define BOOST_TEST_MODULE minigrad
#include <boost/test/unit_test.hpp>
