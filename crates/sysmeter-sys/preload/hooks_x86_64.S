/* Entry stubs and the return trampoline of the `calls` preload library.
 * Stub i (one per function index) loads i into r11 and enters the common path, which saves
 * the argument registers, asks sm_enter for the real target (counting the call, maybe
 * replacing the return address by sm_ret_tramp to time it) and jumps there with the
 * caller's registers intact. The C side is built with -mgeneral-regs-only, so vector and x87
 * argument and return registers are never touched and need no saving. */
        .text
        .globl sm_stubs
        .hidden sm_stubs
        .p2align 4
sm_stubs:
        .set i, 0
        .rept 64
        .p2align 4
        movl $i, %r11d
        jmp sm_common
        .set i, i+1
        .endr

        .p2align 4
sm_common:
        /* entry rsp = 8 mod 16; 7 pushes make it 0 mod 16 for the call */
        pushq %rdi
        pushq %rsi
        pushq %rdx
        pushq %rcx
        pushq %r8
        pushq %r9
        pushq %rax
        movq %r11, %rdi
        leaq 56(%rsp), %rsi
        call sm_enter
        movq %rax, %r11
        popq %rax
        popq %r9
        popq %r8
        popq %rcx
        popq %rdx
        popq %rsi
        popq %rdi
        jmp *%r11

        .globl sm_ret_tramp
        .hidden sm_ret_tramp
        .p2align 4
sm_ret_tramp:
        /* rsp = 0 mod 16 here (the callee popped our address) */
        pushq %rax
        pushq %rdx
        leaq 16(%rsp), %rdi
        call sm_leave
        movq %rax, %r11
        popq %rdx
        popq %rax
        jmp *%r11
        .section .note.GNU-stack,"",@progbits
