#include "node/p2p/transport.h"
