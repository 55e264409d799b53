module github.com/tlbproject/tlb/tools

go 1.26
