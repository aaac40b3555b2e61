# cudaenv shell integration for PowerShell: add to $PROFILE
#   cudaenv init pwsh | Out-String | Invoke-Expression
function global:cudaenv {
  if ($args.Count -gt 0 -and $args[0] -ceq 'use') {
    $rest = @($args | Select-Object -Skip 1)
    $out = & @CUDAENV@ shell-use pwsh @rest
    if ($LASTEXITCODE -ne 0) { return }
    $text = $out | Out-String
    if ($text.Trim()) { Invoke-Expression $text }
  } elseif ($args.Count -gt 0 -and @('current', 'which', 'prefix', 'env', 'list', 'ls') -ccontains $args[0]) {
    # The read-only commands: the hook's binary answers them sooner.
    & @HOOK@ @args
  } else {
    & @CUDAENV@ @args
  }
}
function global:__cudaenv_check { return $false }
function global:__cudaenv_hook {
  if (-not (__cudaenv_check)) {
    $text = & @HOOK@ hook-env pwsh | Out-String
    if ($text.Trim()) { Invoke-Expression $text }
  }
}
if (-not (Get-Variable -Name __cudaenv_prompt -Scope Global -ErrorAction Ignore)) {
  $global:__cudaenv_prompt = $function:prompt
  function global:prompt {
    # Keep $? and $LASTEXITCODE as the user's last command left them, for
    # the prompt we wrap and for the command line after it.
    $ok = $global:?
    $code = $global:LASTEXITCODE
    __cudaenv_hook
    $global:LASTEXITCODE = $code
    if (-not $ok) { Write-Error '' -ErrorAction Ignore }
    & $global:__cudaenv_prompt
    $global:LASTEXITCODE = $code
    if (-not $ok) { Write-Error '' -ErrorAction Ignore }
  }
}
