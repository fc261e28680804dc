from ptxspec.conformance.cli import main

main()
