# cudaenv shell integration for fish: cudaenv init fish | source, in ~/.config/fish/config.fish
function cudaenv
    if test (count $argv) -gt 0; and test "$argv[1]" = use
        set -l __cudaenv_out (@CUDAENV@ shell-use fish $argv[2..-1] | string collect)
        or return $status
        printf '%s\n' $__cudaenv_out | source
    else if test (count $argv) -gt 0; and contains -- "$argv[1]" current which prefix env list ls
        # answered by the hook's quicker binary, with cudaenv's own code
        @HOOK@ $argv
    else
        @CUDAENV@ $argv
    end
end
function __cudaenv_check
    return 1
end
function __cudaenv_hook --on-event fish_prompt --on-variable PWD
    set -l __cudaenv_status $status
    __cudaenv_check; or @HOOK@ hook-env fish | source
    return $__cudaenv_status
end
