package dsl

import "github.com/tlbproject/tlb/l7/policy"

// policyErrs records the field errors of a gateway function's conversion
// (l7/policy) as errors of the file, under the function's path in it
// ("routes[0].cors").
func policyErrs(file, path string, err error, errs *[]error) {
	for _, fe := range policy.Fields(err) {
		*errs = append(*errs, &FieldError{File: file, Field: policy.Path(path, fe.Field), Msg: fe.Msg})
	}
}
