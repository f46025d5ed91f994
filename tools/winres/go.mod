module talaria/tools/winres

go 1.26.0

require github.com/tc-hib/go-winres v0.3.3

require (
	github.com/cpuguy83/go-md2man/v2 v2.0.2 // indirect
	github.com/nfnt/resize v0.0.0-20180221191011-83c6a9932646 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/tc-hib/winres v0.2.1 // indirect
	github.com/urfave/cli/v2 v2.25.7 // indirect
	github.com/xrash/smetrics v0.0.0-20201216005158-039620a65673 // indirect
	golang.org/x/image v0.12.0 // indirect
)
