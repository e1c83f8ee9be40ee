// Placeholder: filled by the interpreter work (issue #5).
#include <gtest/gtest.h>
