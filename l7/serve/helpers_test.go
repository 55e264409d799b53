package serve_test

import (
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/validate"
)

func validateMessage(m proto.Message) error { return validate.Message(m) }
