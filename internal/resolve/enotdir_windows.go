package resolve

import "syscall"

var syscallENOTDIR error = syscall.ERROR_PATH_NOT_FOUND
